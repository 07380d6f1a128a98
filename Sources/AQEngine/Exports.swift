// Users of the engine import AQEngine alone: formats, time stamps, devices come with it.
@_exported import AQCore
@_exported import AQJack
@_exported import AQTypes
