/* kenaf-cameras started the way its unit starts it (config/kenaf-cameras@.service):
 * with only --config, the file naming the robots and the ports. Shared by
 * the service test (test_cameras_service.c) and the browser test
 * (test_cameras_browser.c). */
#ifndef KN_CAMS_SERVICE_H
#define KN_CAMS_SERVICE_H

#include "harness.h"

/* Writes `json` to cameras.json in the scratch directory and starts
 * $KN_CAMERAS --config it --stats with the extra environment entries
 * (NULL-terminated, may be NULL); reads its URL lines until the one of
 * `robot`'s front snapshot and returns the HTTP port (the RTSP port in
 * *rtsp_port when not NULL). The test fails, quoting its stderr, when no
 * such URL comes within a minute. */
int cs_cameras_start(struct h_proc *p, const char *json, char *const env[], const char *robot,
                     int *rtsp_port);

#endif
