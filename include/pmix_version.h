/*
 * zpmix: the PMIx version this API surface is modelled on.
 * zpmix implements the PMIx standard API at the 4.2 level.
 */
#ifndef PMIx_VERSION_H
#define PMIx_VERSION_H

#define PMIX_VERSION_MAJOR 4L
#define PMIX_VERSION_MINOR 2L
#define PMIX_VERSION_RELEASE 2L
#define PMIX_NUMERIC_VERSION 0x00040202

/* zpmix's own version (the library, not the standard level above) */
#define ZPMIX_VERSION_STRING "0.9.0"

#endif /* PMIx_VERSION_H */
