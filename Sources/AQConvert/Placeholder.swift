// AQConvert
