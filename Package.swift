// swift-tools-version:6.1
// aqsync: Audio Queue Services for Linux on JACK. See docs/architecture.md for the layers.
import PackageDescription

/// Render-path modules are checked by the compiler (`@_noLocks`); keep optimisation on in tests
/// too would hide nothing, so the settings are the same for every configuration.
let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "aqsync",
    products: [
        .library(name: "AQEngine", targets: ["AQEngine"]),
        .library(name: "AQCore", targets: ["AQCore"]),
        .library(name: "AQJack", targets: ["AQJack"]),
        .library(name: "AQFileStream", targets: ["AQFileStream"]),
        .library(name: "AQConvert", targets: ["AQConvert"]),
        // Benchmarks only (the Benchmarks/ package links it): not part of the shipped API.
        .library(name: "AQBench", targets: ["AQBench"]),
        .executable(name: "aqsync", targets: ["aqsync"]),
        .executable(name: "a440", targets: ["a440"]),
        .executable(name: "stereo-sine", targets: ["stereo-sine"]),
        .executable(name: "chiptune", targets: ["chiptune"]),
        .executable(name: "record-tone", targets: ["record-tone"]),
        // Render-thread allocation counting for `aqsync bench` (it defines malloc): preloaded
        // by the benchmark into its own process, never linked into anything.
        .library(name: "AQAllocCounter", type: .dynamic, targets: ["CAllocCounter"]),
        // The C API (issue 12, docs/c-api.md): libAudioToolbox.so.
        .library(name: "AudioToolbox", type: .dynamic, targets: ["AudioToolboxC"]),
    ],
    // The command line's packages are used only with the "Tools" trait (on by default): a package
    // that depends on this one with `traits: []` neither fetches nor builds them (README, "The
    // library").
    traits: [
        .default(enabledTraits: ["Tools"]),
        .trait(name: "Tools", description: "aqsync's command line and session files: swift-argument-parser, TOMLKit."),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
    ],
    targets: [
        // C libraries from Debian, through pkg-config.
        .systemLibrary(name: "CJACK", pkgConfig: "jack", providers: [.apt(["libjack-jackd2-dev"])]),
        .systemLibrary(name: "CSoxr", pkgConfig: "soxr", providers: [.apt(["libsoxr-dev"])]),
        // SoundTouch's C interface (LGPL-2.1): time stretching and pitch shifting (issue 22).
        .systemLibrary(name: "CSoundTouch", pkgConfig: "soundtouch", providers: [.apt(["libsoundtouch-dev"])]),

        // libavcodec and libavutil (Debian: libavcodec-dev, libavutil-dev for the headers), not
        // linked but dlopened by AQConvert's packet decoder and encoder on first use (issue 25):
        // their ~96 dependencies cost every process's start otherwise (docs/codecs.md).
        .target(name: "CAVCodec"),
        // libmpg123 (Debian: libmpg123-dev for the header), dlopened the same way: AQConvert's
        // packet decoder decodes MPEG Layer III with it when it loads (docs/codecs.md).
        .target(name: "CMPG123"),

        // Plain value types shared by the parser and the engine (formats, four-char codes).
        .target(name: "AQTypes", swiftSettings: strict),
        // Swift (and one system call's wrapper): time, rings, render commands, the
        // renderer/mixer, timeline maths.
        .target(name: "AQCore", dependencies: ["AQTypes", "CMembarrier", "CFloatMode"], swiftSettings: strict),
        // membarrier(2) for the renderer's gate: the render thread's side costs no locked
        // instruction (docs/architecture.md, "The gate").
        .target(name: "CMembarrier"),
        // The render thread's floating-point mode: denormals flushed to zero (inline asm on the
        // control register, MXCSR or FPCR).
        .target(name: "CFloatMode"),
        // Off-render-thread conversion: PCM decoding to float, libsoxr rate conversion,
        // libavcodec and libmpg123 packet decoding (MP3, AAC, ALAC, FLAC…).
        .target(name: "AQConvert", dependencies: ["AQTypes", "CSoxr", "CAVCodec", "CMPG123", "CSoundTouch"], swiftSettings: strict),
        // The only importer of CJACK: a device driven by JACK's process callback.
        .target(name: "AQJack", dependencies: ["AQCore", "CJACK"], swiftSettings: strict),
        // Starting and stopping a jackd of our own (aqsync's private server, the tests'): kept
        // out of the device module, which only talks to a server.
        .target(name: "AQJackServer", dependencies: ["AQJack"], swiftSettings: strict),
        // The public queue API.
        .target(name: "AQEngine", dependencies: ["AQTypes", "AQCore", "AQConvert", "CFloatMode"], swiftSettings: strict),
        // The push parser (Audio File Stream Services); depends on value types only.
        .target(name: "AQFileStream", dependencies: ["AQTypes"], swiftSettings: strict),
        // Audio files read and written whole: the readers (PCM and compressed, through the
        // parser), the WAV/CAF/AIFF writers, take writers and the CAF packet writer. No TOML:
        // sessions and Audio File Services both stand on it.
        .target(name: "AQAudioFiles", dependencies: ["AQTypes", "AQEngine", "AQConvert", "AQFileStream"], swiftSettings: strict),
        // session.toml: model, loader, the player that feeds queues from the parser, offline render.
        .target(name: "AQSession", dependencies: [
            "AQAudioFiles", "AQEngine", "AQConvert", "AQFileStream", .product(name: "TOMLKit", package: "TOMLKit", condition: .when(traits: ["Tools"])),
        ], swiftSettings: strict),
        // Helpers for tests and benchmarks: a private jackd, impulse finders, WAV reading.
        .target(name: "AQTesting", dependencies: ["AQEngine", "AQJack", "AQJackServer"], swiftSettings: strict),
        // `aqsync bench`: the live (JACK) and offline (hand-driven) render benchmarks.
        .target(name: "AQBench", dependencies: ["AQTypes", "AQCore", "AQJack", "AQJackServer", "AQEngine", "CMixReference"], swiftSettings: strict),
        // The plain C mixer the renderer is measured against, and a plain C JACK client that
        // runs it (benchmarks only, through AQBench).
        .target(name: "CMixReference", linkerSettings: [.linkedLibrary("jack")]),

        // The C API (issue 12): Apple's C headers, written from the references, and the exported
        // C entry points (`@c`) calling the engine and the parser.
        .target(name: "CAudioToolbox"),
        .target(name: "AudioToolboxC", dependencies: ["AQEngine", "AQJack", "AQJackServer", "AQFileStream", "AQConvert", "CAudioToolbox"],
                swiftSettings: strict + [.swiftLanguageMode(.v5)]),

        // Counts render-thread allocations for `aqsync bench` (defines malloc): the
        // AQAllocCounter library, preloaded by the benchmark only.
        .target(name: "CAllocCounter"),

        .executableTarget(name: "aqsync", dependencies: [
            "AQEngine", "AQJack", "AQJackServer", "AQFileStream", "AQSession", "AQBench",
            .product(name: "ArgumentParser", package: "swift-argument-parser", condition: .when(traits: ["Tools"])),
        ], swiftSettings: strict),
        .executableTarget(name: "a440", dependencies: ["AQEngine", "AQJack"], swiftSettings: strict),
        // The recording tutorial's program: N seconds from the default input into a file.
        .executableTarget(name: "record-tone", dependencies: ["AQEngine", "AQJack", "AQSession"], swiftSettings: strict),
        .executableTarget(name: "stereo-sine", dependencies: ["AQEngine", "AQJack"], swiftSettings: strict),
        // The talk's chiptune player: Game_Music_Emu (Debian's libgme-dev) through an output queue.
        .systemLibrary(name: "CGME", pkgConfig: "libgme", providers: [.apt(["libgme-dev"])]),
        .executableTarget(name: "chiptune", dependencies: ["AQEngine", "AQJack", "CGME"], swiftSettings: strict),
        // The complete program of README.md and docs/embedding.md (tests compare and run it).
        .executableTarget(name: "aqengine-example", dependencies: ["AQEngine", "AQJack"], swiftSettings: strict),

        .testTarget(name: "AQCoreTests", dependencies: ["AQCore", "CFloatMode"]),
        .testTarget(name: "AQConvertTests", dependencies: ["AQConvert"]),
        .testTarget(name: "AQEngineTests", dependencies: ["AQEngine", "AQTesting"]),
        .testTarget(name: "AQBenchTests", dependencies: ["AQBench"]),
        .testTarget(name: "AQFileStreamTests", dependencies: ["AQFileStream"]),
        .testTarget(name: "JACKIntegrationTests", dependencies: ["AQJackServer", "AQEngine", "AQJack", "AQTesting"]),
        .testTarget(name: "AQSessionTests", dependencies: ["AQJackServer", "AQSession", "AQJack", "AQTesting"]),
        // The C API's tests build C programs against the installed headers and libAudioToolbox.so.
        .testTarget(name: "CAPITests", dependencies: ["AQTesting"]),
        .testTarget(name: "AQCodecTests", dependencies: ["AQEngine", "AQJack", "AQJackServer", "AQConvert", "AQFileStream", "AQSession", "AQTesting"]),
    ]
)
