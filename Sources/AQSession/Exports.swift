// The audio files sessions read and record (readers, writers, `SessionError`, `TakeFormat`)
// live in AQAudioFiles, which needs no TOML; users of AQSession get them with it.
@_exported import AQAudioFiles
