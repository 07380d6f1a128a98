/* The C target's one source (SwiftPM needs one): the headers in include/ are the product here.
 * It defines nothing: libAudioToolbox.so exports no Core Foundation symbol of its own (issue 23;
 * the run-loop mode constants are the toolchain's, in libFoundation.so). */
typedef int aqsync_caudiotoolbox_has_no_definitions;
