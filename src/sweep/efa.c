/* sweep/efa: the network interfaces each node of a multi-node candidate is launched with.  Pure:
 * the caller asked DescribeInstanceTypes; this only decides (contract and AWS's layout in
 * instbench/sweep.h; the table with its sources in docs/usage.md, "EFA between the nodes"). */
#include "instbench/sweep.h"

#include <stdio.h>
#include <string.h>

static void nic(sweep_efa *e, int card, int device, const char *type, int public_ip)
{
    if (e->n >= EC2_NICS_MAX) return;
    ec2_nic *n = &e->nic[e->n++];
    n->card = card;
    n->device = device;
    snprintf(n->type, sizeof n->type, "%s", type);
    n->public_ip = public_ip;
    if (strcmp(type, "interface")) e->devices++;
}

/* What card C takes (EC2_IF_* bits); LISTED: the answer lists cards, and one it skips is not there.
 * A card whose answer names no interface types (an answer older than NetworkCardInfo.InterfaceTypes)
 * takes all three, as every EFA card did before P6-B300. */
static unsigned card_takes(const ec2_type_network *net, int c, int listed)
{
    if (listed && net->card_max_interfaces[c] <= 0) return 0;
    unsigned t = net->card_types[c];
    return t & EC2_IF_STATED ? t : EC2_IF_ENA | EC2_IF_EFA | EC2_IF_EFA_ONLY;
}

void sweep_efa_layout(const ec2_type_network *net, const char *type, int nodes, int off, sweep_efa *out)
{
    memset(out, 0, sizeof *out);
    if (off) {
        snprintf(out->why, sizeof out->why, "--efa off");
        return;
    }
    if (nodes < 2) {
        snprintf(out->why, sizeof out->why, "one node: no traffic between nodes");
        return;
    }
    if (!net) {
        snprintf(out->why, sizeof out->why, "%s: its network was not described", type);
        return;
    }
    if (!net->efa_supported || net->max_efa_interfaces < 1) {
        snprintf(out->why, sizeof out->why, "%s has no EFA (DescribeInstanceTypes)", type);
        return;
    }
    /* One EFA per network card that takes one, as many as the type allows (AWS's EFA guide,
     * efa-acc-inst-types: "If the network card index 0 supports EFA, create an EFA-only network
     * interface for network card index 0, device index 1"; each further one on the next card,
     * device 0).  P6-B300's card 0 takes ENA alone, its EFA is on cards 1-16. */
    int cards = net->max_network_cards > 0 ? net->max_network_cards : 1;
    if (cards > EC2_CARDS_MAX) cards = EC2_CARDS_MAX;
    int listed = 0;
    for (int c = 0; c < cards; c++) listed |= net->card_max_interfaces[c] > 0;
    int want = net->max_efa_interfaces < cards ? net->max_efa_interfaces : cards;
    unsigned c0 = card_takes(net, 0, listed);
    if (want == 1 && (c0 & EC2_IF_EFA)) {
        /* one interface: EFA with ENA, and the public IPv4 address EC2 gives a lone interface */
        nic(out, 0, 0, "efa", 1);
        return;
    }
    /* card 0, device 0: the primary, ENA (an efa-only interface cannot be primary) with an efa-only
       beside it when the card takes one and has room; a card 0 of one interface, or without
       efa-only, has EFA with ENA as its primary; a card 0 without EFA, its ENA primary alone */
    int room0 = !listed || net->card_max_interfaces[0] >= 2;
    if ((c0 & EC2_IF_ENA) && (c0 & EC2_IF_EFA_ONLY) && room0) {
        nic(out, 0, 0, "interface", 0);
        nic(out, 0, 1, "efa-only", 0);
    } else if (c0 & EC2_IF_EFA) {
        nic(out, 0, 0, "efa", 0);
    } else if (c0 & EC2_IF_ENA) {
        nic(out, 0, 0, "interface", 0);
    } else {
        snprintf(out->why, sizeof out->why,
                 "%s: network card 0 takes neither an ENA nor an EFA primary interface "
                 "(DescribeInstanceTypes)",
                 type);
        return;
    }
    for (int c = 1; c < cards && out->devices < want; c++) {
        unsigned t = card_takes(net, c, listed);
        if (t & EC2_IF_EFA_ONLY) nic(out, c, 0, "efa-only", 0);
        else if (t & EC2_IF_EFA) nic(out, c, 0, "efa", 0);
    }
    if (!out->devices) {
        memset(out, 0, sizeof *out);
        snprintf(out->why, sizeof out->why, "%s: no network card takes an EFA interface (DescribeInstanceTypes)", type);
        return;
    }
    out->elastic_ip = out->n > 1;
}

void sweep_efa_text(const sweep_efa *e, char *out, size_t len)
{
    if (!e->n) {
        snprintf(out, len, "no EFA: %s", e->why);
        return;
    }
    size_t k = 0;
    out[0] = '\0';
    /* runs of consecutive cards with the same interfaces, "cards 1-31: efa-only" */
    for (int i = 0; i < e->n;) {
        int card = e->nic[i].card, j = i;
        char what[64] = "";
        size_t w = 0;
        while (j < e->n && e->nic[j].card == card) {
            w += (size_t)snprintf(what + w, w < sizeof what ? sizeof what - w : 0, "%s%s%s", j > i ? " + " : "",
                                  e->nic[j].type, e->nic[j].card == 0 && e->nic[j].device == 0 ? " (primary)" : "");
            if (w >= sizeof what) w = sizeof what - 1;
            j++;
        }
        int last = card;
        int next = j;
        /* extend over following cards with exactly one interface of the same single type */
        if (j - i == 1)
            while (next < e->n && e->nic[next].card == last + 1 &&
                   (next + 1 >= e->n || e->nic[next + 1].card != last + 1) &&
                   !strcmp(e->nic[next].type, e->nic[i].type) && e->nic[next].device == e->nic[i].device) {
                last++;
                next++;
            }
        if (last > card)
            k += (size_t)snprintf(out + k, k < len ? len - k : 0, "%scards %d-%d: %s", k ? "; " : "", card, last, what);
        else k += (size_t)snprintf(out + k, k < len ? len - k : 0, "%scard %d: %s", k ? "; " : "", card, what);
        if (k >= len) return;
        i = next;
    }
    snprintf(out + k, k < len ? len - k : 0, " (%d EFA device%s%s)", e->devices, e->devices == 1 ? "" : "s",
             e->elastic_ip ? ", an Elastic IP on the primary" : "");
}
