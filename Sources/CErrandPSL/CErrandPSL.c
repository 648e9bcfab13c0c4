#include "CErrandPSL.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

// libpsl's context is opaque; the list it holds is never changed after loading, and lookups
// only read it, so one context serves every thread.
typedef struct psl_ctx_st psl_ctx_t;

// psl_is_public_suffix2's types (libpsl.h): ICANN and private entries, without the prevailing
// "*" rule that makes every unlisted top-level label a suffix.
enum { PSL_TYPE_ICANN = 1 << 0, PSL_TYPE_PRIVATE = 1 << 1, PSL_TYPE_NO_STAR_RULE = 1 << 2 };

static struct {
    psl_ctx_t *(*latest)(const char *);
    const psl_ctx_t *(*builtin)(void);
    int (*is_public_suffix)(const psl_ctx_t *, const char *);
    int (*is_public_suffix2)(const psl_ctx_t *, const char *, int);
} psl;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static const psl_ctx_t *context = NULL;

static void load(void) {
#ifdef __APPLE__
    // No Apple system ships libpsl; one found in a package manager's folder would make the
    // jar's rules differ from machine to machine, so Apple platforms always use the fallback.
    return;
#else
    static const char *const names[] = {"libpsl.so.5", "libpsl.so"};
    void *library = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !library; i++) {
        library = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    }
    if (!library) return;
    *(void **)(&psl.is_public_suffix) = dlsym(library, "psl_is_public_suffix");
    *(void **)(&psl.is_public_suffix2) = dlsym(library, "psl_is_public_suffix2");
    *(void **)(&psl.latest) = dlsym(library, "psl_latest");
    *(void **)(&psl.builtin) = dlsym(library, "psl_builtin");
    if (!psl.is_public_suffix && !psl.is_public_suffix2) return;
    // The newer of the list built in and the distribution's file (libpsl 0.16 and later); the
    // context lives as long as the process.
    if (psl.latest) context = psl.latest(NULL);
    if (!context && psl.builtin) context = psl.builtin();
#endif
}

int errand_psl_load(void) {
    pthread_once(&load_once, load);
    return context != NULL;
}

int errand_psl_is_public_suffix(const char *domain) {
    if (!errand_psl_load()) return -1;
    if (psl.is_public_suffix2) {
        int types = PSL_TYPE_ICANN | PSL_TYPE_PRIVATE | PSL_TYPE_NO_STAR_RULE;
        return psl.is_public_suffix2(context, domain, types) ? 1 : 0;
    }
    // An old libpsl has only the lookup with the star rule; for a name of two labels or more it
    // answers as the one without.
    return psl.is_public_suffix(context, domain) ? 1 : 0;
}
