/*
 * cli/cmd_sample_adapt.c -- `graphsnap sample`: flags and output of the
 * adaptive refresh policies and the run-time core (issue 18).
 */
#include "cli/sample_adapt.h"
#include <stdlib.h>
#include <string.h>

/* A comma-separated list of non-negative numbers (at most GSNAP_MAX_LAYERS). */
static int parse_list(const char *flag, const char *text, double *out, unsigned *n) {
    const char *p = text;
    *n = 0;
    while (*p) {
        char *end;
        double v = strtod(p, &end);
        if (end == p || !(v >= 0) || v > 1e12 || *n >= GSNAP_MAX_LAYERS)
            return cli_usage_err("%s: '%s' is not a list of non-negative numbers", flag, text);
        out[(*n)++] = v;
        p = end;
        if (*p == ',') p++;
        else if (*p) return cli_usage_err("%s: '%s' is not a comma-separated list", flag, text);
    }
    if (*n == 0) return cli_usage_err("%s: empty list", flag);
    return 0;
}

int sample_adapt_parse(int c, const char *arg, gsnap_sampler_options *so, sample_adapt_args *aa) {
    uint64_t u;
    double d;
    switch (c) {
    case O_POLICY:
        if (gsnap_refresh_policy_parse(arg, &so->policy))
            return cli_usage_err("--refresh-policy: '%s' is not fixed, miss or feedback", arg);
        return 0;
    case O_LAMBDA:
        if (parse_list("--lambda", arg, so->lambda, &aa->nlambda)) return CLI_USAGE;
        for (unsigned i = 0; i < aa->nlambda; i++)
            if (!(so->lambda[i] > 0)) return cli_usage_err("--lambda: each value must be > 0");
        return 0;
    case O_KAPPA:
        if (cli_parse_double("--kappa", arg, &d)) return CLI_USAGE;
        if (!(d > 0 && d <= 1e12)) return cli_usage_err("--kappa: must be > 0");
        so->kappa = d;
        return 0;
    case O_FEEDBACK: return parse_list("--feedback", arg, aa->feedback, &aa->nfeedback) ? CLI_USAGE : 0;
    case O_ADAPT_WINDOW:
        if (cli_parse_u64_range("--adapt-window", arg, 1, 1u << 20, &u)) return CLI_USAGE;
        so->adapt_window = (uint32_t)u;
        return 0;
    case O_CORE_MIN:
        if (cli_parse_u64_range("--core-min", arg, 0, UINT32_MAX, &u)) return CLI_USAGE;
        so->core_min = (uint32_t)u;
        return 0;
    case O_CORE_MAX_BYTES: return cli_parse_u64("--core-max-bytes", arg, &so->core_max_bytes) ? CLI_USAGE : 0;
    default: return cli_usage_err("internal: unhandled option");
    }
}

int sample_adapt_check(gsnap_sampler_options *so, const sample_adapt_args *aa) {
    unsigned L = so->layers;
    if (aa->nlambda == 1) /* one value for every layer */
        for (unsigned i = 1; i < L; i++) so->lambda[i] = so->lambda[0];
    else if (aa->nlambda && aa->nlambda != L)
        return cli_usage_err("--lambda: %u values for %u layers (give one or one per layer)",
                             aa->nlambda, L);
    if (aa->nfeedback && aa->nfeedback != L && aa->nfeedback != 1)
        return cli_usage_err("--feedback: %u values for %u layers", aa->nfeedback, L);
    if (aa->nfeedback && so->policy != GSNAP_REFRESH_FEEDBACK)
        return cli_usage_err("--feedback needs --refresh-policy feedback");
    return 0;
}

int sample_adapt_before(gsnap_sampler *s, const sample_adapt_args *aa, unsigned layers) {
    for (unsigned i = 0; aa->nfeedback && i < layers; i++) {
        int rc = gsnap_sampler_report(s, i, aa->feedback[aa->nfeedback == 1 ? 0 : i]);
        if (rc) return rc;
    }
    return 0;
}

static void print_choice(const gsnap_gamma_choice *g, int json, int first) {
    if (json) {
        printf("%s{\"batch\":%llu,\"layer\":%u,\"gamma\":%.6f,\"needed\":%llu,\"not_held\":%llu,"
               "\"stale\":%llu,\"delta_h\":%.6f,\"lambda\":%g,\"statistic\":%g,\"kappa\":%g}",
               first ? "" : ",", (unsigned long long)g->batch, g->layer, g->gamma,
               (unsigned long long)g->needed, (unsigned long long)g->not_held,
               (unsigned long long)g->stale, g->delta_h, g->lambda, g->statistic, g->kappa);
        return;
    }
    if (g->policy == GSNAP_REFRESH_FEEDBACK)
        printf("  batch %llu layer %u: gamma %.4f (statistic %g, kappa %g)\n",
               (unsigned long long)g->batch, g->layer, g->gamma, g->statistic, g->kappa);
    else
        printf("  batch %llu layer %u: gamma %.4f (DeltaH %.4f = (%llu not held + %llu stale) / "
               "%llu needed, lambda %g)\n", (unsigned long long)g->batch, g->layer, g->gamma,
               g->delta_h, (unsigned long long)g->not_held, (unsigned long long)g->stale,
               (unsigned long long)g->needed, g->lambda);
}

void sample_adapt_print(gsnap_sampler *s, int json) {
    gsnap_adapt_stats as;
    gsnap_sampler_adapt_stats_get(s, &as);
    size_t n = gsnap_sampler_gamma_history(s, NULL, 0);
    gsnap_gamma_choice *h = n ? calloc(n, sizeof *h) : NULL;
    if (h) n = gsnap_sampler_gamma_history(s, h, n) < n ? 0 : n;
    else n = 0;
    const char *pol = gsnap_refresh_policy_name((gsnap_refresh_policy)as.policy);
    if (json) {
        printf(",\"refresh_policy\":\"%s\",\"adapt\":{\"decisions\":%llu,\"skipped\":%llu,"
               "\"dynamic_core\":%u,\"core_nodes\":%llu,\"core_bytes\":%llu,\"core_joined\":%llu,"
               "\"core_left\":%llu,\"core_capped\":%llu,\"gammas\":[", pol,
               (unsigned long long)as.decisions, (unsigned long long)as.skipped, as.dynamic_core,
               (unsigned long long)as.core_nodes, (unsigned long long)as.core_bytes,
               (unsigned long long)as.core_joined, (unsigned long long)as.core_left,
               (unsigned long long)as.core_capped);
        for (size_t i = 0; i < n; i++) print_choice(&h[i], 1, i == 0);
        printf("]}");
    } else {
        printf("refresh policy %s: %llu decisions (%llu refreshes skipped at gamma 0)\n", pol,
               (unsigned long long)as.decisions, (unsigned long long)as.skipped);
        for (size_t i = 0; i < n; i++) print_choice(&h[i], 0, i == 0);
        printf("core: %llu nodes, %llu bytes", (unsigned long long)as.core_nodes,
               (unsigned long long)as.core_bytes);
        if (as.dynamic_core)
            printf(" (run-time: %llu joined, %llu left, %llu kept out by the bound)",
                   (unsigned long long)as.core_joined, (unsigned long long)as.core_left,
                   (unsigned long long)as.core_capped);
        printf("\n");
    }
    free(h);
}
