"""EC2 and Pricing answers shaped as AWS writes them (the EC2 API reference's examples,
tests/data/prices/*.xml), for the tests' own endpoints (testlib.ScriptedHandler) that answer
`instbench prices` with what the fake AWS does not send: thousands of zones and scores, pages
larger than any AWS page.  Pages of 1,000 items (the calls' MaxResults) follow each other by a
nextToken that is the next item's offset."""
import urllib.parse

import testlib

EC2_NS = "http://ec2.amazonaws.com/doc/2016-11-15/"


def form(handler):
    """The request's form fields (EC2's query API), one value each, and its X-Amz-Target."""
    body = handler.rfile.read(int(handler.headers.get("Content-Length") or 0)).decode()
    return {k: v[0] for k, v in urllib.parse.parse_qs(body).items()}, handler.headers.get("X-Amz-Target", "")


def paged(root, list_name, items, fields, token):
    """One page of ITEMS (dicts, tags in FIELDS order) from offset TOKEN: the XML answer."""
    start = int(token or 0)
    page = items[start:start + 1000]
    body = "".join("<item>%s</item>" % "".join("<%s>%s</%s>" % (f, it[f], f) for f in fields if f in it)
                   for it in page)
    more = "<nextToken>%d</nextToken>" % (start + 1000) if start + 1000 < len(items) else ""
    return '<%s xmlns="%s"><requestId>x</requestId><%s>%s</%s>%s</%s>' % (root, EC2_NS, list_name, body, list_name,
                                                                         more, root)


def spot_page(items, token):
    """DescribeSpotPriceHistory: items with instanceType, spotPrice, timestamp, availabilityZone."""
    for it in items:
        it.setdefault("productDescription", "Linux/UNIX")
    return paged("DescribeSpotPriceHistoryResponse", "spotPriceHistorySet", items,
                 ("instanceType", "productDescription", "spotPrice", "timestamp", "availabilityZone"), token)


def scores_page(items, token):
    """GetSpotPlacementScores: items with region, availabilityZoneId (absent: the region's), score."""
    return paged("GetSpotPlacementScoresResponse", "spotPlacementScoreSet", items,
                 ("region", "availabilityZoneId", "score"), token)


def zones_page(pairs):
    """DescribeAvailabilityZones: (zoneName, zoneId) pairs."""
    items = [{"zoneName": n, "zoneId": i} for n, i in pairs]
    return paged("DescribeAvailabilityZonesResponse", "availabilityZoneInfo", items, ("zoneName", "zoneId"), None)


def prices_env(url, home, extra=None):
    """`instbench prices` against URL (every service) with made-up keys, its cache under HOME."""
    return testlib.offline_env(home, dict({"AWS_ENDPOINT_URL": url, "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE",
                                           "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
                                           "INSTBENCH_AWS_BACKOFF_BASE": "0.01"}, **(extra or {})))
