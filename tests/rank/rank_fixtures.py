"""Builders for `instbench rank` tests: result files (instbench.result/v1, complete enough to pass
schemas/result-v1.json) and price files (instbench.prices/v1), plus an independent Python model
of the ranking arithmetic.  Nothing here is derived from instbench's own output."""
import json
import math
import os
import statistics
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def result(instance_type, region, nodes, accel_count, accel_name, sps, fingerprint="f" * 64,
           model="vit_base_patch16_224", batch=128, count=None, market="on-demand",
           timestamp="2026-11-21T10:00:00Z", backend="cuda", host="node0", hourly_cost=None):
    """hourly_cost: None, or (usd_per_node_hour, market) as `measure --hourly-cost` records it."""
    world = nodes * max(accel_count, 1)
    doc = {
        "schema": "instbench.result/v1",
        "tool": {"name": "instbench", "version": "0.1.0"},
        "timestamp": timestamp,
        "instance": {"type": instance_type, "region": region, "availability_zone": None, "market": market,
                     "source": "flag", "count": count if count is not None else 1, "hostname": host},
        "hardware": {"backend": backend, "accelerator_count": accel_count,
                     "devices": [{"name": accel_name, "memory_bytes": 24 << 30, "compute_capability": "8.6"}
                                 for _ in range(accel_count)],
                     "driver": None, "cuda": None, "nccl": None, "cpu_model": "AMD EPYC 7R32", "vcpus": 4,
                     "memory_bytes": 16 << 30, "os": "Linux", "kernel": "6", "onednn":
                         {"version": "2.6.3", "isa": None, "isa_source": "runtime"}},
        "workload": {"model": model, "img_size": 224, "patch_size": 16, "in_chans": 3, "embed_dim": 768,
                     "depth": 12, "num_heads": 12, "mlp_ratio": 4, "num_classes": 1000, "params": 86567656,
                     "train_flops_per_sample": 1.0e11, "precision": "bf16",
                     "optimizer": {"name": "adam", "lr": 0.001, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8,
                                   "weight_decay": 0},
                     "batch_size_per_device": batch, "global_batch_size": batch * world, "data": "host",
                     "fingerprint": fingerprint},
        "topology": {"nodes": nodes, "world_size": world, "local_world_size": max(accel_count, 1),
                     "rendezvous": "none"},
        "measurement": {"warmup_steps": 3, "steps": 20, "duration_s": 30.0, "samples_per_second": sps,
                        "samples_per_second_per_device": sps / world,
                        "step_time_s": {"median": 0.1, "p10": 0.1, "p90": 0.1, "mean": 0.1, "stdev": 0.0,
                                        "cv": 0.0},
                        "breakdown_s": {"data": 0.0, "compute": 0.1, "communication": 0.0},
                        "model_tflops": 1.0, "peak_tflops": None, "peak_source": "none", "mfu": None,
                        "first_loss": 6.9, "last_loss": 6.8, "data_pipeline_samples_per_second": None,
                        "warnings": []},
    }
    if hourly_cost is not None:
        doc["price"] = {"usd_per_hour": hourly_cost[0], "market": hourly_cost[1], "source": "user"}
    return doc


# A made-up sweep's configurations (type, accelerators per node), for the benchmarks
# (scripts/bench/bench_rank.sh, scripts/bench/bench_s3.sh).
SWEEP_TYPES = [("g5.xlarge", 1), ("g5.2xlarge", 1), ("g5.4xlarge", 1), ("g5.12xlarge", 4), ("g5.48xlarge", 8),
               ("g6.xlarge", 1), ("g6.12xlarge", 4), ("g6e.xlarge", 1), ("g4dn.xlarge", 1), ("g4dn.12xlarge", 4),
               ("p3.2xlarge", 1), ("p3.8xlarge", 4), ("p3.16xlarge", 8), ("p4d.24xlarge", 8), ("p5.48xlarge", 8),
               ("g5.8xlarge", 1), ("g5.16xlarge", 1), ("g5.24xlarge", 4), ("g6.2xlarge", 1), ("g6.48xlarge", 8),
               ("g4dn.2xlarge", 1), ("g4dn.metal", 8), ("p3dn.24xlarge", 8), ("g6e.12xlarge", 4)]


def sweep_result(i, rnd, **kw):
    """The I-th result of a made-up sweep: SWEEP_TYPES in turn, 1, 2, 4 then 8 nodes, two regions,
    300-400 samples/s per accelerator drawn from RND (a random.Random); KW goes to result()."""
    t, acc = SWEEP_TYPES[i % len(SWEEP_TYPES)]
    nodes = (1, 2, 4, 8)[(i // len(SWEEP_TYPES)) % 4]
    return result(t, ("us-east-1", "us-west-2")[i % 2], nodes, acc, "NVIDIA A10G",
                  rnd.uniform(300, 400) * acc * nodes, **kw)


INTERRUPTION_LABELS = ["<5%", "5-10%", "10-15%", "15-20%", ">20%"]


def price_record(instance_type, region, on_demand, spot_zones, bucket=None, placement=None,
                 as_of="2026-11-21T00:00:00Z", source="snapshot", az_scores=None):
    """spot_zones: {az: price} or None; az_scores: {az: per-AZ placement score}."""
    az_scores = az_scores or {}
    return {
        "instance_type": instance_type, "region": region,
        "on_demand": None if on_demand is None else {"usd_per_hour": on_demand, "source": source, "as_of": as_of},
        "spot": None if spot_zones is None else {
            "source": source, "as_of": as_of,
            "zones": [dict({"availability_zone": az, "usd_per_hour": p, "timestamp": as_of},
                           **({"placement_score": az_scores[az]} if az in az_scores else {}))
                      for az, p in sorted(spot_zones.items())]},
        "interruption": None if bucket is None else {"bucket": bucket, "label": INTERRUPTION_LABELS[bucket],
                                                     "savings_pct": 60},
        "placement_score": placement,
    }


def prices_doc(records):
    return {"schema": "instbench.prices/v1", "generated_at": "2026-11-21T00:00:00Z", "snapshot": None,
            "prices": records}


def write_json(path, obj):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w") as f:
        json.dump(obj, f)


def run(binary, args, stdin=None, env=None, cwd=None):
    p = subprocess.run([binary, "rank"] + args, input=stdin, capture_output=True, env=env, cwd=cwd, timeout=600)
    err = p.stderr.decode(errors="replace")
    if p.returncode < 0:
        raise AssertionError(f"instbench rank {args} died with signal {-p.returncode}\n{err}")
    # Under the ASan/UBSan build a memory error, leak or undefined behaviour is a failure even
    # when the exit status happens to be the expected one.
    for marker in ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:"):
        if marker in err:
            raise AssertionError(f"instbench rank {args}: sanitizer report\n{err[-3000:]}")
    return p.returncode, p.stdout.decode(), err


def markets_fake(folder, timeout="120"):
    """The fake AWS (tests/fakes/aws_fake_server.py) serving FOLDER's prices.json, blocks.json
    (Capacity Block offerings) and sp.json (Savings Plan rates), and the environment a rank run
    against it takes: HOME and its cache in FOLDER, none of the caller's AWS_* settings, example
    credentials, no instance metadata, no colour.  Returns (fake, env); the caller stops the fake."""
    from testlib import FakeAws
    fake = FakeAws("--prices", os.path.join(folder, "prices.json"), "--capacity-blocks",
                   os.path.join(folder, "blocks.json"), "--savings-plan-rates", os.path.join(folder, "sp.json"),
                   "--timeout", timeout)
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(HOME=folder, XDG_CACHE_HOME=os.path.join(folder, "cache"), AWS_EC2_METADATA_DISABLED="true",
               AWS_CONFIG_FILE=os.path.join(folder, "none"), AWS_SHARED_CREDENTIALS_FILE=os.path.join(folder, "none"),
               AWS_ACCESS_KEY_ID="AKIDEXAMPLE", AWS_SECRET_ACCESS_KEY="wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
               AWS_ENDPOINT_URL=fake.url, NO_COLOR="1")
    return fake, env


# ---- the independent model ------------------------------------------------------------------

def expected_rows(results, prices, markets=("on-demand", "spot"), region=None, spot="lowest", az=None,
                  target=None, deadline=None, budget=None, max_hourly=None, pareto_only=False, spot_risk=True,
                  interruption_rate=None):
    """Returns (ranked-unsorted priced rows, unpriced rows) as dicts, from first principles.

    Each priced row also gets rank_sps, rank_spd, rank_hours, rank_cost: the figures it is ranked,
    filtered and Pareto-marked by.  On a spot row with an Advisor bucket (or INTERRUPTION_RATE)
    and SPOT_RISK they are the risk-adjusted ones of spot_model (defaults: checkpoint from the
    workload's parameters, 10 min restart, Daly's interval); otherwise the raw ones."""
    import spot_model
    params, precision = results[0]["workload"].get("params"), results[0]["workload"]["precision"]
    checkpoint_s = spot_model.default_checkpoint_s(params, precision)
    configs = {}
    for r in results:
        measured = r["topology"]["nodes"]
        nodes = max(measured, r["instance"].get("count") or 1)
        reg = region or r["instance"]["region"]
        # What ran is part of a configuration: backend and device name, not only where.
        devices = r["hardware"]["devices"]
        key = (r["instance"]["type"], nodes, reg, r["hardware"]["backend"], devices[0]["name"] if devices else "")
        configs.setdefault(key, []).append((measured, r["measurement"]["samples_per_second"]))
    table = {(p["instance_type"], p["region"]): p for p in prices["prices"]}
    priced, unpriced = [], []
    for (itype, nodes, reg, _backend, _device), measured_runs in configs.items():
        # A run measured on all the nodes wins over --count extrapolations to them; what is left of
        # an extrapolation scales linearly from the nodes measured.
        if any(m == nodes for m, _ in measured_runs):
            measured_runs = [(m, v) for m, v in measured_runs if m == nodes]
        runs = [v * nodes / m for m, v in measured_runs]
        measured_nodes = min(m for m, _ in measured_runs)
        sps = statistics.median(runs)
        for market in markets:
            if market == "spot" and itype.startswith("ml."):
                if "on-demand" not in markets:   # asked for spot alone: listed as unpriced
                    unpriced.append({"instance_type": itype, "nodes": nodes, "region": reg, "market": market})
                continue
            row = {"instance_type": itype, "nodes": nodes, "region": reg, "market": market,
                   "samples_per_second": sps, "runs": len(runs), "min": min(runs), "max": max(runs),
                   "measured_nodes": measured_nodes, "extrapolated": measured_nodes < nodes}
            rec = table.get((itype, reg))
            price = None
            if rec and market == "on-demand" and rec["on_demand"]:
                price = rec["on_demand"]["usd_per_hour"]
            elif rec and market == "spot" and rec["spot"] and rec["spot"]["zones"]:
                zones = {z["availability_zone"]: z["usd_per_hour"] for z in rec["spot"]["zones"]}
                scores = {z["availability_zone"]: z.get("placement_score") for z in rec["spot"]["zones"]}
                if spot == "lowest":
                    best = min(zones.values())
                    row["az"] = sorted(a for a, p in zones.items() if p == best)[0]
                    price = best
                elif spot == "median":
                    price = statistics.median(zones.values())
                elif az in zones:
                    price, row["az"] = zones[az], az
            if price is None:
                unpriced.append(row)
                continue
            if market == "spot":
                # Interruption bucket: the region's; placement: the priced AZ's score, else the region's.
                # A price file's scores ask for one instance (TargetCapacity 1): a multi-node row's
                # question is another one (asked live only), so it has none from a file.
                row["interruption_bucket"] = rec["interruption"]["bucket"] if rec["interruption"] else None
                row["placement_score"] = (scores.get(row.get("az")) or rec["placement_score"]) if nodes == 1 else None
            row["price_per_node"] = price
            row["usd_per_hour"] = nodes * price
            row["samples_per_dollar"] = sps * 3600.0 / (nodes * price)
            if target:
                row["hours_to_target"] = target / sps / 3600.0
                row["cost_to_target_usd"] = row["hours_to_target"] * row["usd_per_hour"]
            row["rank_sps"], row["rank_spd"] = sps, row["samples_per_dollar"]
            row["rank_hours"], row["rank_cost"] = row.get("hours_to_target"), row.get("cost_to_target_usd")
            rate = interruption_rate
            if rate is None and market == "spot" and row.get("interruption_bucket") is not None:
                rate = float(spot_model.bucket_rate(row["interruption_bucket"]))
            if spot_risk and market == "spot" and rate is not None:
                f = spot_model.spot_figures(sps, row["usd_per_hour"], nodes, rate, checkpoint_s,
                                            spot_model.DEFAULT_RESTART_S, None, target)
                row["rank_sps"], row["rank_spd"] = f["effective_samples_per_second"], f["effective_samples_per_dollar"]
                if target:
                    row["rank_hours"], row["rank_cost"] = f["expected_hours_to_target"], f["expected_cost_to_target_usd"]
            priced.append(row)
    if max_hourly is not None:
        priced = [r for r in priced if r["usd_per_hour"] <= max_hourly]
    if deadline is not None:
        priced = [r for r in priced if r["rank_hours"] <= deadline]
    if budget is not None:
        priced = [r for r in priced if r["rank_cost"] <= budget]
    for r in priced:
        r["pareto"] = not any(
            o is not r and o["rank_sps"] >= r["rank_sps"] and o["rank_spd"] >= r["rank_spd"]
            and (o["rank_sps"] > r["rank_sps"] or o["rank_spd"] > r["rank_spd"]) for o in priced)
    if pareto_only:
        priced = [r for r in priced if r["pareto"]]
    return priced, unpriced


def sort_key(name, target):
    """The order rank promises, on each row's ranking figures (expected_rows: rank_*)."""
    if name == "samples-per-dollar":
        return lambda r: -r["rank_spd"]
    if name == "time" and target:
        # when the job is done: a spot row's expected hours (spot_model), not target / effective rate
        return lambda r: (r["rank_hours"], -r["rank_spd"])
    if name == "throughput" or name == "time":
        return lambda r: (-r["rank_sps"], -r["rank_spd"])
    if name == "cost":
        return (lambda r: r["rank_cost"]) if target else (lambda r: (r["usd_per_hour"], -r["rank_spd"]))
    raise ValueError(name)


def close(a, b, rel=1e-9):
    return a == b or abs(a - b) <= rel * max(abs(a), abs(b))


def label(r):
    return f'{r["nodes"]} x {r["instance_type"]} {r["market"]}'


def ranked(doc):
    """The ranked rows of an instbench.rank/v2 document (best first): rows with a rank."""
    return [r for r in doc["rows"] if r["rank"] is not None]


def row_keys(stdout):
    """The rows of `rank --format json` output as sorted, comparable strings (configuration, market,
    samples/s, $/h): what two rankings of the same results share; None when STDOUT is no JSON."""
    try:
        doc = json.loads(stdout)
    except ValueError:
        return None
    return sorted(json.dumps({k: r.get(k) for k in ("configuration", "market", "samples_per_s", "usd_per_hour")},
                             sort_keys=True) for r in doc["rows"])


def unpriced(doc):
    """Its unpriced rows: no rank, empty price fields, the reason in unpriced_reason."""
    return [r for r in doc["rows"] if r["rank"] is None]


def write_seed_results(folder):
    """The README's story in FOLDER (made if missing): 1 x g5.xlarge, a real 4-node g5.xlarge run and
    1 x g5.12xlarge, all ViT-B/16 in us-east-1 (readme_examples, cli_examples)."""
    os.makedirs(folder, exist_ok=True)
    write_json(os.path.join(folder, "g5.xlarge.json"), result("g5.xlarge", "us-east-1", 1, 1, "NVIDIA A10G", 210.0))
    write_json(os.path.join(folder, "g5.xlarge-4.json"),
               result("g5.xlarge", "us-east-1", 4, 1, "NVIDIA A10G", 790.0, host="node1"))
    write_json(os.path.join(folder, "g5.12xlarge.json"),
               result("g5.12xlarge", "us-east-1", 1, 4, "NVIDIA A10G", 820.0, host="node2"))


def write_gzip_inputs(folder, plain, jsonl_cap=64 << 20):
    """Gzip-compressed results in FOLDER, made by Python's gzip/zlib modules, and the same results
    decompressed (by Python) into PLAIN, the reference a plain `rank` reads.  Good: a .json.gz, a
    .jsonl.gz of two gzip members with zero padding after them, an array in a .json.gz.  Bad, each
    skipped with a reason holding the word given: a bomb (64 MiB + 1 of spaces in 64 KB), a .jsonl.gz
    of short lines inflating past JSONL_CAP (a local .jsonl's 1 GiB, an S3 object's 64 MiB), a
    truncated .json.gz, one with corrupt deflate data, one that is not gzip at all.
    Returns (the number of good results, {bad file name: word})."""
    import gzip
    os.makedirs(folder, exist_ok=True)
    os.makedirs(plain, exist_ok=True)
    docs = [result("g5.xlarge", "us-east-1", 1, 1, "NVIDIA A10G", 210.0, host="gz1"),
            result("g5.2xlarge", "us-east-1", 1, 1, "NVIDIA A10G", 231.0, host="gz2"),
            result("g5.2xlarge", "us-east-1", 2, 1, "NVIDIA A10G", 440.0, host="gz3"),
            result("g5.12xlarge", "us-east-1", 1, 4, "NVIDIA A10G", 820.0, host="gz4"),
            result("g5.12xlarge", "us-east-1", 2, 4, "NVIDIA A10G", 1600.0, host="gz5")]
    good = {"one.json.gz": gzip.compress(json.dumps(docs[0]).encode()),
            "two.jsonl.gz": b"".join(gzip.compress((json.dumps(d) + "\n").encode()) for d in docs[1:3]) + b"\0" * 8,
            "arr.json.gz": gzip.compress(json.dumps(docs[3:]).encode())}
    whole = gzip.compress(json.dumps(docs[0]).encode())
    body = whole[10:-8]   # the deflate data between the 10-byte header and the CRC/size trailer
    bad = {"bomb.json.gz": (gzip.compress(b" " * ((64 << 20) + 1)), "64 MiB"),
           "cut.json.gz": (whole[:len(whole) // 2], "truncated"),
           "corrupt.json.gz": (whole[:10] + bytes(b ^ 0x5a for b in body[:16]) + body[16:] + whole[-8:], "corrupt"),
           "plain-text.json.gz": (json.dumps(docs[0]).encode(), "not gzip")}
    for name, data in good.items():
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)
        with open(os.path.join(plain, name[:-3]), "wb") as f:
            f.write(gzip.decompress(data))
    for name, (data, _) in bad.items():
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)
    # lines of 1,000 spaces past the cap: one gzip member of 16 MiB of them, written over and over
    # (a file of many members is one stream to gunzip and to rank; compressing each 16 MiB anew
    # cost 5 CPU-seconds a run)
    line, chunk = b" " * 1000 + b"\n", 16 << 20
    member = gzip.compress(line * (chunk // len(line)), compresslevel=1)
    with open(os.path.join(folder, "lines-bomb.jsonl.gz"), "wb") as f:
        for _ in range(jsonl_cap // chunk + 2):
            f.write(member)
    bad["lines-bomb.jsonl.gz"] = (None, "%d MiB" % (jsonl_cap >> 20))
    return len(docs), {name: word for name, (_, word) in bad.items()}


def gzip_problems(plain_run, gz_run, n_good, bad, where):
    """What is wrong with GZ_RUN, the (rc, stdout, stderr) of ranking write_gzip_inputs' folder
    (its files named WHERE + name in messages), against PLAIN_RUN, the plain copies ranked: the
    same rows, N_GOOD results, each of BAD skipped once with its word.  [] when nothing is."""
    (rc_ref, ref, _), (rc, out, err) = plain_run, gz_run
    if rc_ref != 0 or rc != 0:
        return ["rc: plain %d, gzip %d: %s" % (rc_ref, rc, err[-600:])]
    out_rows = row_keys(out)
    problems = [] if out_rows and out_rows == row_keys(ref) else \
        ["gzip rows differ from the plain files':\n%s\n%s" % (out_rows, row_keys(ref))]
    inputs = json.loads(out)["inputs"]
    if inputs.get("results") != n_good or inputs.get("skipped") != len(bad):
        problems.append("inputs %r: want %d results, %d skipped" % (inputs, n_good, len(bad)))
    for name, word in bad.items():
        lines = [ln for ln in err.splitlines() if where + name in ln]
        if len(lines) != 1 or word not in lines[0]:
            problems.append("%s: want one skip line with %r: %r" % (name, word, lines))
    return problems
