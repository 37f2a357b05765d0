/* cli/sample_adapt.h -- `graphsnap sample`'s adaptive-refresh and run-time
 * core flags (issue 18), kept apart from cmd_sample.c. */
#ifndef GSNAP_CLI_SAMPLE_ADAPT_H
#define GSNAP_CLI_SAMPLE_ADAPT_H
#include "cli/cli.h"

enum { O_ADAPT_FIRST = 1100, O_POLICY = O_ADAPT_FIRST, O_LAMBDA, O_KAPPA, O_ADAPT_WINDOW,
       O_FEEDBACK, O_CORE_MIN, O_CORE_MAX_BYTES, O_ADAPT_LAST = O_CORE_MAX_BYTES };

/* getopt_long entries for the flags above (the caller copies them in). */
#define SAMPLE_ADAPT_LONGOPTS                                               \
    {"refresh-policy", required_argument, NULL, O_POLICY},                  \
    {"lambda", required_argument, NULL, O_LAMBDA},                          \
    {"kappa", required_argument, NULL, O_KAPPA},                            \
    {"adapt-window", required_argument, NULL, O_ADAPT_WINDOW},              \
    {"feedback", required_argument, NULL, O_FEEDBACK},                      \
    {"core-min", required_argument, NULL, O_CORE_MIN},                      \
    {"core-max-bytes", required_argument, NULL, O_CORE_MAX_BYTES}

/* Usage lines of the flags. */
#define SAMPLE_ADAPT_USAGE                                                                   \
    "  --refresh-policy P gamma at each scheduled refresh (OTF modes): fixed (--gamma,\n"   \
    "                     default), miss (clamp(DeltaH / (2 lambda), 0, 1), DeltaH = share\n" \
    "                     of the frontier the cache did not hold over the window) or\n"   \
    "                     feedback (min(1, kappa * statistic reported per layer))\n"       \
    "  --lambda LIST      miss: cost weight per layer, input layer first, or one value\n"  \
    "                     for all (default 0.5)\n"                                          \
    "  --kappa K          feedback: gamma = min(1, K * statistic) (default 1)\n"            \
    "  --feedback LIST    feedback: the statistic per layer reported before each batch\n"  \
    "  --adapt-window T   batches DeltaH and core frequencies are measured over\n"         \
    "                     (default: --period)\n"                                            \
    "  --core-min N       run-time core: a node with N frontier appearances over the\n"    \
    "                     window joins the cached core at the next refresh, one below\n"    \
    "                     leaves (default 0: the static --threshold core)\n"              \
    "  --core-max-bytes B bound on the core's bytes (hottest first; default none)\n"

typedef struct {
    double feedback[GSNAP_MAX_LAYERS];
    unsigned nfeedback;
    unsigned nlambda; /* --lambda values given */
} sample_adapt_args;

/* Parse one of the flags into so / aa; CLI_USAGE on a bad value. */
int sample_adapt_parse(int c, const char *arg, gsnap_sampler_options *so, sample_adapt_args *aa);
/* Check the lists against the layer count (after all flags). */
int sample_adapt_check(gsnap_sampler_options *so, const sample_adapt_args *aa);
/* Before each batch: report the --feedback statistics (one value: every layer). */
int sample_adapt_before(gsnap_sampler *s, const sample_adapt_args *aa, unsigned layers);
/* The policy, its decisions and the core: text lines, or (json) the members
 * `,"refresh_policy":..,"adapt":{..}` to put inside the result object. */
void sample_adapt_print(gsnap_sampler *s, int json);
#endif
