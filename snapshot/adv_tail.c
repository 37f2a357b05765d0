/*
 * snapshot/adv_tail.c -- the add-only path of `snapshot advance` at hop 1
 * and in the commit's cached lists.
 *
 * When the database has never committed a delete (gsnap_db_stat.deletes is
 * 0: no delete in any version, so none in the old or the new (T, V)), T
 * stays and V does not go back, an in-neighbour of v at the new (T, V) is
 * one at the old (T, V) or the other end of an add in versions (old V, new
 * V] with t <= T: N_new(v) = N_old(v) u tail(v). N_old(v) is the stored
 * D_1(v) when it is not capped (D_1 = R_1 = N then; no record: empty), so
 * hop 1 reads only the appended events of v (gsnap_store__node_raw with
 * after = old V, which skips runs of older versions) instead of v's whole
 * adjacency. A capped D_1 does not hold N_old: that node's N_old is the
 * store's answer at the old (T, V), and its N_new the same union, so it is
 * queried once, not at both (T, V) (the hubs of a stream's tail are most of
 * the adjacency hop 1 reads).
 *
 * Cached lists (any path): the build draws layer h's cached list of v as
 * the m = min(ceil(alpha f_h), |N(v)|) members of N(v) with the smallest
 * (XXH3(id, key(seed, h, v, gen 0)), id) (sample.c). That is a bottom-m of
 * one order, so when v lost no in-neighbour and its stored entry is such a
 * draw (generation 0, min(m_full, old degree) ids), the new draw is the
 * bottom-m of the stored ids and the new in-neighbours: no pass over N(v).
 * Entries of later generations (sampler refreshes) are drawn again from
 * N(v).
 */
#include "snapshot/adv_int.h"

/* Nodes whose hop 1 came from the appended events, over all advances of
 * the process, and of them those with a capped D_1
 * (tests/test_snapshot_advance_random.c reads both). */
uint64_t gsnap_adv__tail_nodes, gsnap_adv__tail_capped;

void gsnap_adv__addonly_check(adv *a) {
    /* no delete up to the recompute's view: none between the old and the new (T, V) */
    a->addonly = a->T == a->cat.at_t && a->V >= a->cat.at_version && gsnap_read__deletes(a->rd) == 0;
}

/* N_new(v) from the ids of N_old(v) (ascending) and v's appended adds, into
 * the adjacency cache (capped: N_old came from the store, not the stored
 * D_1; counted only). *done = 0 when this path does not apply to v. */
int gsnap_adv__tail_nin(adv *a, uint64_t v, const vec *old, int capped, int *done) {
    size_t n = 0, k = 0;
    int rc;
    *done = 0;
    if ((rc = gsnap_store__node_raw(a->db, a->rd, v, a->p.dir, a->cat.at_version, a->V, &a->tev, &n,
                                    &a->tev_cap)))
        return rc;
    a->tail.n = 0;
    for (size_t i = 0; i < n; i++) { /* (nbr, t, version) order: distinct nbrs ascending */
        const gsnap_store_ev *e = &a->tev[i];
        if (e->del) return 0; /* cannot be: the check said no deletes */
        if (e->t > a->T || (a->tail.n && a->tail.v[a->tail.n - 1] == e->nbr)) continue;
        if ((rc = vpush(&a->tail, e->nbr))) return rc;
    }
    a->merged.n = 0;
    for (size_t i = 0; i < a->tail.n; i++) {
        uint64_t x = a->tail.v[i];
        while (k < old->n && old->v[k] < x)
            if ((rc = vpush(&a->merged, old->v[k++]))) return rc;
        if (k < old->n && old->v[k] == x) k++;
        if ((rc = vpush(&a->merged, x))) return rc;
    }
    if ((rc = gsnap_adv__vappend(&a->merged, old->v + k, old->n - k))) return rc;
    if ((rc = gsnap_adv__nin_put(a, v, a->merged.v, a->merged.n))) return rc;
    __atomic_fetch_add(&gsnap_adv__tail_nodes, 1, __ATOMIC_RELAXED);
    if (capped) __atomic_fetch_add(&gsnap_adv__tail_capped, 1, __ATOMIC_RELAXED);
    *done = 1;
    return 0;
}

static int cmp_id(const void *x, const void *y) {
    uint64_t p = *(const uint64_t *)x, q = *(const uint64_t *)y;
    return (p > q) - (p < q);
}

/* Layer h's cached list of C_1 node i (index into c1_list) with n in-neighbours
 * now: *done = 1 when drawn from the stored draw old[0..nold) (generation
 * gen, over old_deg in-neighbours) and the new in-neighbours, into out[0..m). */
int gsnap_adv__cache_incr(adv *a, size_t i, size_t n, size_t m_full, uint64_t key, uint64_t gen,
                          const uint64_t *old, size_t nold, uint64_t old_deg, vec *out, int *done) {
    *done = 0;
    if (!a->c1_doff.v || a->c1_lost[i] || gen != 0) return 0;
    const uint64_t *add = a->c1_new.v + a->c1_doff.v[i];
    size_t nadd = a->c1_doff.v[i + 1] - a->c1_doff.v[i];
    if (old_deg + nadd != n || nold != (old_deg < m_full ? old_deg : m_full)) return 0;
    size_t m = n < m_full ? n : m_full;
    int rc;
    a->merged.n = 0;
    if ((rc = gsnap_adv__vappend(&a->merged, old, nold)) || (rc = gsnap_adv__vappend(&a->merged, add, nadd)))
        return rc;
    out->n = 0;
    for (size_t j = 0; j < (m ? m : 1); j++)
        if ((rc = vpush(out, 0))) return rc;
    out->n = m;
    if (a->merged.n <= m) { /* all of N: ascending like the build's */
        memcpy(out->v, a->merged.v, m * sizeof *out->v);
        qsort(out->v, m, sizeof *out->v, cmp_id);
    } else if ((rc = gsnap_snap__select(a->merged.v, a->merged.n, m, key, out->v, &a->scratch, &a->scratch_cap))) {
        return rc;
    }
    *done = 1;
    return 0;
}
