// AQFileStream
