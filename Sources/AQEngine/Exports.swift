// Users of the engine import AQEngine: formats, time stamps and the device protocol (with the
// hand-driven device) come with it. The JACK device is a module of its own: `import AQJack`
// (the engine itself knows no JACK, so an engine used offline never loads libjack).
@_exported import AQCore
@_exported import AQTypes
