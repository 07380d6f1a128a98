import Synchronization

/// What the render thread last published about one slot, for control-side reads
/// (``RenderCore/position(slot:)``, ``RenderCore/volume(slot:)``, ``RenderCore/isSlotFree(_:)``).
/// Written by the render thread after every command and cycle that changes them; ``state`` is
/// stored last (release) and read first (acquire).
struct PublishedSlot: ~Copyable {
    /// The slot's ``SlotState`` raw value (0: free).
    let state = Atomic<Int64>(0)
    /// The device frame of the queue's frame 0.
    let origin = Atomic<Int64>(0)
    /// The device frame the queue paused at.
    let pauseFrame = Atomic<Int64>(0)
    /// The volume in force, as the Float's bit pattern.
    let volumeBits = Atomic<Int64>(0)
    /// Volume commands applied so far.
    let volumeSets = Atomic<Int64>(0)
}
