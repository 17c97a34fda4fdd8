/* libFuzzer target: the sweep's state file reader (src/sweep/state.c), which `sweep status` and
 * `sweep cleanup` use on a file anyone with the user's account could have edited.  No input may
 * crash, leak or read out of bounds, and whatever it accepts must be a state the sweep could have
 * written: every instance id and Elastic IP allocation of AWS's shape and none twice, every
 * candidate index in range, no two EFA interfaces on one (network card, device index), an address
 * a dotted quad; and written back out (sweep_state_json) it must read back to the same text.
 * What `sweep status` and `sweep report` then compute from it must hold too: a cost that is a
 * finite sum of dollars, each candidate's S3 key name within its buffer.
 * Seeds: tests/fuzz/corpus/fuzz_sweep_state/ (a valid state and the hostile shapes of issue 39). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "instbench/aws_ids.h"
#include "instbench/sweep.h"

static void check(const sweep_state *st)
{
    for (size_t i = 0; i < st->n_inst; i++) {
        const sweep_state_instance *in = &st->inst[i];
        if (!aws_instance_id_valid(in->id) || in->candidate < 0 || (size_t)in->candidate >= st->n_cand) abort();
        if (in->eip_allocation[0] && !aws_eip_allocation_id_valid(in->eip_allocation)) abort();
        if ((in->private_ip[0] && !aws_ipv4_valid(in->private_ip)) ||
            (in->eip_public_ip[0] && !aws_ipv4_valid(in->eip_public_ip)))
            abort();
        for (size_t k = 0; k < i; k++)
            if (!strcmp(st->inst[k].id, in->id) ||
                (in->eip_allocation[0] && !strcmp(st->inst[k].eip_allocation, in->eip_allocation)))
                abort();
    }
    for (size_t c = 0; c < st->n_cand; c++) {
        const sweep_state_candidate *sc = &st->cand[c];
        if (sc->c.block && !aws_capacity_reservation_id_valid(sc->c.reservation)) abort();
        if (sc->ami[0] && !aws_ami_id_valid(sc->ami)) abort();
        for (int a = 0; a < sc->efa.n; a++)
            for (int b = 0; b < a; b++)
                if (sc->efa.nic[a].card == sc->efa.nic[b].card && sc->efa.nic[a].device == sc->efa.nic[b].device)
                    abort();
    }
    if (st->sg_id[0] && !aws_security_group_id_valid(st->sg_id)) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sweep_state st;
    ib_error err = {0};
    if (sweep_state_parse((const char *)data, size, &st, &err) != 0) return 0;
    check(&st);
    size_t unpriced = 0, estimated = 0; /* at a fixed clock, so an input costs the same on every run */
    const double usd = sweep_state_cost(&st, st.finished ? st.finished : 1795000000, &unpriced, &estimated);
    if (!isfinite(usd) || usd < 0 || unpriced > st.n_inst || estimated > st.n_inst) abort();
    for (size_t c = 0; c < st.n_cand; c++) {
        char name[160]; /* sweep_delivery_key's */
        sweep_candidate_key_name(&st, c, name, sizeof name);
        if (strnlen(name, sizeof name) == sizeof name || !sweep_outcome_name(st.cand[c].outcome)[0]) abort();
    }
    char *text = sweep_state_json(&st);
    if (text) {
        sweep_state again;
        if (sweep_state_parse(text, strlen(text), &again, &err) != 0) abort(); /* what it writes, it reads */
        char *text2 = sweep_state_json(&again);
        if (!text2 || strcmp(text, text2)) abort();
        free(text2);
        sweep_state_free(&again);
    }
    free(text);
    sweep_state_free(&st);
    return 0;
}
