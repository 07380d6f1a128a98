// AQTesting
