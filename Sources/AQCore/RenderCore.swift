/// Placeholder: replaced by the renderer.
public struct RenderCore: @unchecked Sendable {
    public let clock: DeviceClockCore
    public init(clock: DeviceClockCore) { self.clock = clock }

    /// Renders one cycle into `channelCount` non-interleaved float outputs of
    /// `cycle.frames` frames each. Render thread only.
    @_noLocks
    public mutating func render(
        _ cycle: CycleInfo, outputs: UnsafePointer<UnsafeMutablePointer<Float>>, channelCount: Int
    ) {
        clock.publish(cycle)
        let n = Int(cycle.frames)
        for c in 0..<channelCount {
            let o = outputs[c]
            for i in 0..<n { o[i] = 0 }
        }
    }
}
