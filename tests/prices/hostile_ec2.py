"""EC2 and Pricing answers shaped as AWS writes them (the EC2 API reference's examples,
tests/data/prices/*.xml), for the tests' own endpoints (testlib.ScriptedHandler) that answer
`instbench prices` with what the fake AWS does not send: thousands of zones and scores, pages
larger than any AWS page.  Pages of 1,000 items (the calls' MaxResults) follow each other by a
nextToken that is the next item's offset.  Importing it puts tests/lib and tests/fakes on sys.path."""
import os
import sys
import urllib.parse

sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d) for d in ("lib", "fakes")]
import testlib  # noqa: E402

EC2_NS = "http://ec2.amazonaws.com/doc/2016-11-15/"


def form(handler):
    """The request's form fields (EC2's query API), one value each, and its X-Amz-Target."""
    body = handler.rfile.read(int(handler.headers.get("Content-Length") or 0)).decode()
    return {k: v[0] for k, v in urllib.parse.parse_qs(body).items()}, handler.headers.get("X-Amz-Target", "")


def paged(root, list_name, items, fields, token, pad=0, total=None, size=1000):
    """One page of ITEMS (dicts, tags in FIELDS order) from offset TOKEN: the XML answer, indented as
    AWS indents it; PAD: that many more bytes, an XML comment before the root's end (a page that
    much longer, whatever a reader makes of its items).  TOTAL: ITEMS are the page's own, of a
    listing of TOTAL items.  SIZE: items a page (the request's MaxResults)."""
    start = int(token or 0)
    page = items[start:start + size] if total is None else items
    total = len(items) if total is None else total
    body = "".join("\n        <item>%s\n        </item>" % "".join(
        "\n            <%s>%s</%s>" % (f, it[f], f) for f in fields if f in it) for it in page)
    more = "\n    <nextToken>%d</nextToken>" % (start + size) if start + size < total else ""
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<%s xmlns="%s">\n    <requestId>x</requestId>\n    <%s>%s'
            '\n    </%s>%s%s\n</%s>' % (root, EC2_NS, list_name, body, list_name, more,
                                       "<!--%s-->" % ("x" * pad) if pad else "", root))


def spot_page(items, token, pad=0, total=None, size=1000):
    """DescribeSpotPriceHistory: items with instanceType, spotPrice, timestamp, availabilityZone."""
    for it in items:
        it.setdefault("productDescription", "Linux/UNIX")
    return paged("DescribeSpotPriceHistoryResponse", "spotPriceHistorySet", items,
                 ("instanceType", "productDescription", "spotPrice", "timestamp", "availabilityZone"), token, pad,
                 total, size)


def scores_page(items, token, pad=0, total=None):
    """GetSpotPlacementScores: items with region, availabilityZoneId (absent: the region's), score."""
    return paged("GetSpotPlacementScoresResponse", "spotPlacementScoreSet", items,
                 ("region", "availabilityZoneId", "score"), token, pad, total)


ZONE_FIELDS = ("zoneName", "zoneState", "regionName", "messageSet", "zoneId", "zoneType", "parentZoneName",
               "parentZoneId", "groupName", "groupLongName", "networkBorderGroup", "optInStatus")


def zones_page(pairs, region="us-east-1", pad=0):
    """DescribeAvailabilityZones: (zoneName, zoneId) pairs, each with the members AWS lists for a zone."""
    items = [{"zoneName": n, "zoneState": "available", "regionName": region, "messageSet": "", "zoneId": i,
              "zoneType": "availability-zone", "groupName": region, "networkBorderGroup": region,
              "optInStatus": "opt-in-not-required"} for n, i in pairs]
    return paged("DescribeAvailabilityZonesResponse", "availabilityZoneInfo", items, ZONE_FIELDS, None, pad)


def prices_env(url, home, extra=None):
    """`instbench prices` against URL (every service) with made-up keys, its cache under HOME."""
    return testlib.offline_env(home, dict({"AWS_ENDPOINT_URL": url, "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE",
                                           "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
                                           "INSTBENCH_AWS_BACKOFF_BASE": "0.01"}, **(extra or {})))
