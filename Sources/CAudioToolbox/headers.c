/* The headers are the target; the library is Sources/AudioToolboxC. */
void aqc_headers_only(void);
void aqc_headers_only(void) {}
