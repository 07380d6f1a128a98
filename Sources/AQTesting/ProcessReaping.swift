import Foundation

extension Process {
    /// Ends a child a test started, without ever waiting forever: SIGTERM when it still runs,
    /// up to `grace` seconds for it to exit, then SIGKILL; then reaps it. Returns false when it
    /// had to be killed (a child that ignores SIGTERM for that long is hung; the caller may
    /// record that). Any thread; blocks at most `grace` seconds plus the reaping.
    @discardableResult
    package func terminateAndReap(grace: Double = 10) -> Bool {
        guard isRunning else {
            waitUntilExit()
            return true
        }
        terminate()
        let clean = exited(within: grace)
        if !clean {
            print("\(executableURL?.lastPathComponent ?? "child") \(processIdentifier) did not exit \(grace) s after SIGTERM: SIGKILL")
            kill(processIdentifier, SIGKILL)
        }
        waitUntilExit()
        return clean
    }
}

extension Process {
    /// Waits up to `seconds` for the child to exit on its own; a child still running then is
    /// ended as ``terminateAndReap(grace:)`` does. Returns true when it exited on its own in
    /// time. Any thread; blocks at most `seconds` plus the grace.
    package func waitUntilExit(within seconds: Double) -> Bool {
        let exited = exited(within: seconds)
        terminateAndReap()
        return exited
    }

    /// True once the child has exited, waiting at most `seconds`: a thread of its own waits
    /// for the exit and signals (no polling here); a child still running at the deadline is
    /// left running, that thread then ends with it. Any thread.
    package func exited(within seconds: Double) -> Bool {
        guard isRunning else { return true }
        let signal = DispatchSemaphore(value: 0)
        let waiter = Thread { [self] in
            waitUntilExit()
            signal.signal()
        }
        waiter.name = "aqsync-test-exit-waiter"
        waiter.start()
        return signal.wait(timeout: .now() + seconds) == .success
    }
}
