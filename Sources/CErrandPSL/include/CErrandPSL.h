// The Public Suffix List from the system's libpsl, loaded at run time with dlopen as
// CErrandCurl loads libcurl: building needs no development package, and a system without
// libpsl still runs (the cookie jar then refuses only single-label domains). Apple platforms
// never load it.
#ifndef CERRANDPSL_H
#define CERRANDPSL_H

/// 1 when libpsl and its list were loaded; loads them on the first call, once per process.
int errand_psl_load(void);

/// 1 when `domain` (lowercase ASCII or UTF-8, no trailing dot, two labels or more) is an ICANN
/// or private entry of the list, 0 when it is not, -1 without libpsl. A top-level label the list
/// does not name is not a suffix here: the caller decides single labels.
int errand_psl_is_public_suffix(const char *domain);

#endif
