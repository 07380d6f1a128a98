// AQJack
