// The Public Suffix List from the system's libpsl, loaded at run time with dlopen as
// CErrandCurl loads libcurl: building needs no development package, and a system without
// libpsl still runs (the cookie jar then refuses only single-label domains).
#ifndef CERRANDPSL_H
#define CERRANDPSL_H

/// 1 when libpsl and its list were loaded; loads them on the first call.
int errand_psl_load(void);

/// 1 when `domain` (lowercase, no trailing dot) is a public suffix — an ICANN or private
/// entry, or a name under no known suffix at all — 0 when it is not, -1 without libpsl.
int errand_psl_is_public_suffix(const char *domain);

#endif
