import AQTesting
import Foundation
import Testing

/// The C API without a server (issue 12): the headers compile with gcc and clang and lay the
/// structures out as the references imply, every declared function is exported, and the offline
/// conformance program passes.
@Suite struct CAPITests {
    /// Sizes and offsets of every structure (x86-64), with gcc in C99 and C11 and with clang.
    @Test(arguments: ["gcc -std=c99", "gcc -std=gnu11", "clang -std=c11"])
    func structureLayoutsMatchTheReference(compiler: String) throws {
        let exe = try CAPI.build("Tests/CAPIPrograms/layout.c", compiler: compiler, name: "layout-" + compiler.map { $0.isLetter || $0.isNumber ? String($0) : "-" }.joined())
        let r = try CAPI.run(exe)
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains(" 0 failed"), "\(r.output)")
    }

    /// Code using Apple's annotations and CF_ENUM builds with both compilers, and as C++.
    @Test(arguments: ["gcc", "clang", "g++ -x c++"])
    func annotationsAreAccepted(compiler: String) throws {
        let exe = try CAPI.build(
            "Tests/CAPIPrograms/annotations.c", compiler: compiler,
            name: "annotations-" + compiler.map { $0.isLetter || $0.isNumber ? String($0) : "-" }.joined())
        let r = try CAPI.run(exe)
        #expect(r.status == 0, "\(r.output)")
    }

    /// Every function the installed headers declare is a dynamic symbol of the library.
    @Test func everyDeclaredFunctionIsExported() throws {
        let prefix = try CAPI.prefix()
        var declared: Set<String> = []
        for header in ["AudioToolbox/AudioQueue.h", "AudioToolbox/AudioFileStream.h", "AudioToolbox/AudioFile.h", "AudioToolbox/ExtendedAudioFile.h", "AudioToolbox/AudioConverter.h",
                       "AudioToolbox/AudioFormat.h", "AudioToolbox/AudioServices.h", "CoreAudio/AudioHardware.h", "CoreAudio/HostTime.h"] {
            let text = try String(contentsOf: prefix.appendingPathComponent("include/\(header)"), encoding: .utf8)
            let regex = try NSRegularExpression(pattern: #"^extern [A-Za-z0-9_ ]+?\**\s*([A-Za-z_][A-Za-z0-9_]*)\("#, options: .anchorsMatchLines)
            for m in regex.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                declared.insert(String(text[Range(m.range(at: 1), in: text)!]))
            }
        }
        #expect(declared.count == 35 + 7 + 16 + 12 + 10 + 2 + 3 + 3 + 7 /* AudioFile.h user data */ + 5 /* HostTime.h */, "declared: \(declared.sorted())")
        let nm = try CAPI.shell("nm -D --defined-only '\(prefix.path)/lib/libAudioToolbox.so'")
        let exported = Set(nm.output.split(separator: "\n").compactMap { line -> String? in
            let f = line.split(separator: " ")
            return f.count == 3 && f[1] == "T" ? String(f[2]) : nil
        })
        #expect(declared.subtracting(exported).isEmpty, "not exported: \(declared.subtracting(exported).sorted())")
    }

    /// Core Foundation is the toolchain's (issue 23): the library defines no CF symbol (function
    /// or data: the run-loop modes are libFoundation's too), and needs libFoundation.so.
    @Test func exportsNoCoreFoundationSymbol() throws {
        let prefix = try CAPI.prefix()
        let nm = try CAPI.shell("nm -D --defined-only '\(prefix.path)/lib/libAudioToolbox.so'")
        try #require(nm.status == 0, "\(nm.output)")
        let cf = nm.output.split(separator: "\n").filter { line in
            let f = line.split(separator: " ")
            // libdispatch's and BlocksRuntime's (issue 22: dispatch-queue queues) neither.
            return f.count == 3 && (f[2].hasPrefix("CF") || f[2].hasPrefix("kCF") || f[2].hasPrefix("__CF")
                || f[2].hasPrefix("dispatch_") || f[2].hasPrefix("_dispatch") || f[2].hasPrefix("_Block_"))
        }
        #expect(cf.isEmpty, "exported: \(cf)")
        #expect(nm.output.contains(" AudioQueueNewOutput"), "the check reads the right library")
        let needed = try CAPI.shell("readelf -d '\(prefix.path)/lib/libAudioToolbox.so'")
        #expect(needed.output.contains("[libFoundation.so]"), "\(needed.output)")
    }

    /// The CF a program sees is the toolchain's, through either kind of header (issue 23):
    /// clang -fblocks reads the toolchain's own, gcc, clang without blocks and C++ the subset.
    @Test(arguments: ["clang -fblocks", "clang", "gcc", "g++ -x c++"])
    func coreFoundationIsTheToolchains(compiler: String) throws {
        let exe = try CAPI.build(
            "Tests/CAPIPrograms/cf_types.c", compiler: compiler,
            name: "cf_types-" + compiler.map { $0.isLetter || $0.isNumber ? String($0) : "-" }.joined())
        let r = try CAPI.run(exe)
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains(" 0 failed"), "\(r.output)")
    }

    /// Every function called, the result codes provoked, samples at exact frames (offline).
    @Test func offlineConformance() throws {
        let exe = try CAPI.build("Tests/CAPIPrograms/conformance_offline.c")
        let r = try CAPI.run(exe, environment: ["AQSYNC_DEVICE": "offline"])
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains(" 0 failed"), "\(r.output)")
    }

    /// Time/pitch through the C API (issue 22; `timepitch_offline.c`, offline): the properties
    /// and parameters with their result codes, PlayRate 2 and Pitch +1200 heard in the render.
    @Test func timePitchOffline() throws {
        let exe = try CAPI.build("Tests/CAPIPrograms/timepitch_offline.c")
        let r = try CAPI.run(exe, environment: ["AQSYNC_DEVICE": "offline"])
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains(" 0 failed"), "\(r.output)")
    }

    /// kAudioQueueProperty_ChannelAssignments through the C API (issue 22; `channel_assign.c
    /// offline`): defaults, result codes, listeners, the assignments carried to a 4-channel
    /// offline device, a stereo queue on outputs 3 and 4 rendered exactly there (1 and 2
    /// silent), a recording queue's set and get. Built with gcc and with clang.
    @Test func channelAssignmentsOffline() throws {
        for compiler in ["cc", "clang"] {
            let exe = try CAPI.build("Tests/CAPIPrograms/channel_assign.c", compiler: compiler, name: "channel_assign_\(compiler)")
            let r = try CAPI.run(exe, ["offline"], environment: ["AQSYNC_DEVICE": "offline"])
            #expect(r.status == 0, "\(compiler): \(r.output)")
            #expect(r.output.contains(" 0 failed"), "\(compiler): \(r.output)")
            #expect(r.output.contains("outputs 3 and 4 carry the source exactly: yes"), "\(compiler): \(r.output)")
        }
    }

    /// Processing taps through the C API (issue 22; `processing_tap_offline.c`, offline): a
    /// halving tap heard halved sample for sample, GetQueueTime continuous, dispose stopping the
    /// callbacks, a siphon seeing every frame once with the audio unchanged, the result codes.
    @Test func processingTapOffline() throws {
        let exe = try CAPI.build("Tests/CAPIPrograms/processing_tap_offline.c")
        let r = try CAPI.run(exe, environment: ["AQSYNC_DEVICE": "offline"])
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains(" 0 failed"), "\(r.output)")
    }

    /// What a recorder asks before recording (issue 23; `format_device.c`, offline at 44.1 kHz):
    /// FormatInfo completing linear PCM, AAC, ALAC and Apple IMA4 formats; the default input and output
    /// device, its nominal rate, buffer size and name; a queue's converter properties; the
    /// result codes of each.
    @Test func formatInfoDevicesAndConverterProperties() throws {
        let exe = try CAPI.build("Tests/CAPIPrograms/format_device.c")
        let r = try CAPI.run(exe, environment: ["AQSYNC_DEVICE": "offline", "AQSYNC_SAMPLE_RATE": "44100"])
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains(" 0 failed"), "\(r.output)")
    }

    /// HE-AAC and MP2 as an internet-radio player meets them (issue 23, `heaac_formatlist.c`,
    /// offline): the format list of a 22.05 kHz ADTS stream (HE-AAC first, then the LC core)
    /// from the parser, Audio File Services and Audio Format Services (format + cookie); the
    /// first item an output queue accepts is the HE one; HE-AAC v2, MP2 and MP1 queues.
    @Test func heAACFormatListAndMPEGLayerQueues() throws {
        let prefix = try CAPI.prefix()
        let dir = prefix.appendingPathComponent("heaac")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let aac = dir.appendingPathComponent("he.aac").path, mp2 = dir.appendingPathComponent("t.mp2").path
        for (file, codec) in [(aac, "-ar 22050 -c:a aac -b:a 64k -f adts"), (mp2, "-c:a mp2 -b:a 192k")] {
            let ff = try CAPI.shell("ffmpeg -loglevel error -y -f lavfi -i sine=frequency=1000:sample_rate=44100:duration=1 -ac 2 \(codec) '\(file)'")
            try #require(ff.status == 0, "\(ff.output)")
        }
        let exe = try CAPI.build("Tests/CAPIPrograms/heaac_formatlist.c")
        let r = try CAPI.run(exe, [aac, mp2], environment: ["AQSYNC_DEVICE": "offline", "AQSYNC_SAMPLE_RATE": "44100"])
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains(" 0 failed"), "\(r.output)")
    }

    /// What Apple's ConvertFile asks (issue 23; `convertfile_needs.c`, no server): the decoder and
    /// encoder lists of Audio Format Services, an encoder's channel layout ('prop'), the packet
    /// table and cookie of a CAF being written reported writable, a decoder's PrimeInfo set from
    /// the packet table dropping the priming (again after a reset; without it the tone is 1024
    /// frames late), UseExtAF.cpp's bit rate (an AAC file at rate 0 taking the client's rate, the
    /// converter's kAudioConverterEncodeBitRate through kExtAudioFileProperty_AudioConverter and
    /// ConverterConfig), CFURLCopyPath under gcc.
    @Test func convertFileNeeds() throws {
        let exe = try CAPI.build("Tests/CAPIPrograms/convertfile_needs.c")
        let dir = try CAPI.prefix().appendingPathComponent("convertfile-needs")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let r = try CAPI.run(exe, [dir.path], environment: ["AQSYNC_DEVICE": "offline"])
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains(" 0 failed"), "\(r.output)")
    }

    /// Apple's aqrender's way (issue 23; `offline_runloop.c`, offline): a queue on this thread's
    /// run loop rendered offline without the loop running; its callbacks run inside
    /// AudioQueueOfflineRender on this thread, refill the one buffer, flush and stop, and the
    /// rendered frames hold the whole ramp in order. (Before, the callbacks waited for the loop
    /// and aqrender rendered silence for ever.)
    @Test func offlineRenderRunsRunLoopCallbacks() throws {
        let exe = try CAPI.build("Tests/CAPIPrograms/offline_runloop.c")
        let r = try CAPI.run(exe, environment: ["AQSYNC_DEVICE": "offline", "AQSYNC_SAMPLE_RATE": "44100"])
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains(" 0 failed"), "\(r.output)")
    }

    /// Audio File Stream Services through C: properties, translations, seeking, result codes;
    /// then (offline, at 44.1 kHz) the parsed packets and cookie decoded by a queue whose
    /// buffer came from AudioQueueAllocateBuffer, the tone found in the render.
    @Test func fileStreamConformance() throws {
        let prefix = try CAPI.prefix()
        let file = prefix.appendingPathComponent("tone.aac")
        let ff = try CAPI.shell("ffmpeg -loglevel error -y -f lavfi -i sine=frequency=1000:sample_rate=44100:duration=2 -ac 2 -c:a aac -b:a 128k -f adts '\(file.path)'")
        try #require(ff.status == 0, "\(ff.output)")
        let exe = try CAPI.build("Tests/CAPIPrograms/conformance_filestream.c")
        let r = try CAPI.run(exe, [file.path], environment: ["AQSYNC_DEVICE": "offline", "AQSYNC_SAMPLE_RATE": "44100"])
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains(" 0 failed"), "\(r.output)")
        #expect(r.output.contains("the queue part ran"), "\(r.output)")
    }
}

/// What streaming players and recorders need of the queue (issue 22): StreamDescription,
/// MaximumOutputPacketSize, DecodeBufferSizeFrames, ConverterError on both kinds of queue;
/// BufferEnqueuedTwice, EnqueueDuringReset, InvalidPropertyValue; descriptions in the buffer
/// itself, with PCM, beyond a hidden room; 1000 buffers on one queue (`queue_players.c`, offline
/// at 44.1 kHz on an ADTS tone made by ffmpeg).
@Suite struct CAPIPlayerNeedsTests {
    @Test func queueConstantsAndBuffersThatPlayersUse() throws {
        let prefix = try CAPI.prefix()
        let file = prefix.appendingPathComponent("players-tone.aac")
        let ff = try CAPI.shell("ffmpeg -loglevel error -y -f lavfi -i sine=frequency=1000:sample_rate=44100:duration=2 -ac 2 -c:a aac -b:a 128k -f adts '\(file.path)'")
        try #require(ff.status == 0, "\(ff.output)")
        let exe = try CAPI.build("Tests/CAPIPrograms/queue_players.c")
        let r = try CAPI.run(exe, [file.path], environment: ["AQSYNC_DEVICE": "offline", "AQSYNC_SAMPLE_RATE": "44100"])
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains(" 0 failed"), "\(r.output)")
    }
}

/// The installed headers as Clang modules for Swift (`import AudioToolbox`, `import CoreAudio`).
@Suite struct CAPISwiftModuleTests {
    @Test func swiftImportsTheInstalledModules() throws {
        let prefix = try CAPI.prefix()
        let exe = prefix.appendingPathComponent("bin/swift_module")
        try FileManager.default.createDirectory(at: exe.deletingLastPathComponent(), withIntermediateDirectories: true)
        let source = CAPI.root.appendingPathComponent("Tests/CAPIPrograms/swift_module.swift").path
        let build = try CAPI.shell(
            "swiftc -warnings-as-errors -module-cache-path '\(prefix.path)/module-cache' -I '\(prefix.path)/include' -L '\(prefix.path)/lib' "
                + "-Xlinker -rpath -Xlinker '\(prefix.path)/lib' '\(source)' -o '\(exe.path)'", timeout: 300)
        try #require(build.status == 0, "\(build.output)")
        let r = try CAPI.run(exe, environment: ["AQSYNC_DEVICE": "offline"])
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains("swift module ok"), "\(r.output)")
    }

    /// Audio File Services, FormatInfo and the device's rate from Swift as Apple's Swift writes
    /// them (issue 23: `.eraseFile`, `.readPermission`, CFURL), linked by the module maps alone
    /// (`link "AudioToolbox"`, `link "Foundation"` for Core Foundation); run offline.
    @Test func audioFileFromSwift() throws {
        let prefix = try CAPI.prefix()
        let exe = prefix.appendingPathComponent("bin/swift_audiofile")
        try FileManager.default.createDirectory(at: exe.deletingLastPathComponent(), withIntermediateDirectories: true)
        let source = CAPI.root.appendingPathComponent("Tests/CAPIPrograms/swift_audiofile.swift").path
        let build = try CAPI.shell(
            "swiftc -warnings-as-errors -module-cache-path '\(prefix.path)/module-cache-audiofile' -I '\(prefix.path)/include' -L '\(prefix.path)/lib' "
                + "-Xlinker -rpath -Xlinker '\(prefix.path)/lib' '\(source)' -o '\(exe.path)'", timeout: 300)
        try #require(build.status == 0, "\(build.output)")
        let r = try CAPI.run(exe, [prefix.appendingPathComponent("swift-audiofile.caf").path], environment: ["AQSYNC_DEVICE": "offline", "AQSYNC_SAMPLE_RATE": "44100"])
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains("swift audiofile ok"), "\(r.output)")
    }

    /// Constants import with their Apple types (issue 22): Swift written for Apple's platforms
    /// compiles without casts (`swift_constants.swift`), linked with -lAudioToolbox.
    @Test func constantsImportWithTheirAppleTypes() throws {
        let prefix = try CAPI.prefix()
        let exe = prefix.appendingPathComponent("bin/swift_constants")
        try FileManager.default.createDirectory(at: exe.deletingLastPathComponent(), withIntermediateDirectories: true)
        let source = CAPI.root.appendingPathComponent("Tests/CAPIPrograms/swift_constants.swift").path
        let build = try CAPI.shell(
            "swiftc -warnings-as-errors -module-cache-path '\(prefix.path)/module-cache' -I '\(prefix.path)/include' -L '\(prefix.path)/lib' "
                + "-lAudioToolbox -Xlinker -rpath -Xlinker '\(prefix.path)/lib' '\(source)' -o '\(exe.path)'", timeout: 300)
        try #require(build.status == 0, "\(build.output)")
        let r = try CAPI.run(exe, environment: ["AQSYNC_DEVICE": "offline"])
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains("swift constants ok"), "\(r.output)")
    }
}
