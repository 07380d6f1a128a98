// `make check-nolocks` compiles this file and expects the compiler to refuse it: an array is
// allocated inside a @_noLocks function. If it ever compiles, the render path's checking is
// off and nothing proves it lock- and allocation-free.
@_noLocks
public func renderProbe(_ frames: Int) -> Int {
    let scratch = [Float](repeating: 0, count: frames)
    return scratch.count
}
