// AQEngine
