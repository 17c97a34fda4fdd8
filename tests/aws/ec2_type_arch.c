/* ec2_type_arch: DescribeInstanceTypes' processorInfo/supportedArchitectures as
 * aws_ec2_parse_type_networks reads it into ec2_type_network.arch, which picks a sweep's AMI.
 * The answers are shaped as the EC2 API reference's DescribeInstanceTypes example and botocore's
 * ec2 model have them (query protocol: ProcessorInfo -> <processorInfo>, SupportedArchitectures ->
 * <supportedArchitectures> with <item> members; ArchitectureType enum: i386, x86_64, arm64,
 * x86_64_mac, arm64_mac).  The values expected are the model's, not the parser's output. */
#include <string.h>

#include "check.h"
#include "instbench/aws_services.h"

#define NS "http://ec2.amazonaws.com/doc/2016-11-15/"

static void one(const char *archs_xml, const char *want, const char *what)
{
    char xml[2048];
    snprintf(xml, sizeof xml,
             "<DescribeInstanceTypesResponse xmlns=\"" NS "\"><requestId>r</requestId><instanceTypeSet><item>"
             "<instanceType>t.large</instanceType>%s"
             "<networkInfo><efaSupported>false</efaSupported><maximumNetworkCards>1</maximumNetworkCards>"
             "</networkInfo></item></instanceTypeSet></DescribeInstanceTypesResponse>",
             archs_xml);
    char *types[] = {"t.large"};
    ec2_type_network out[1];
    int seen[1] = {0};
    ib_error err = {0};
    int rc = aws_ec2_parse_type_networks(xml, strlen(xml), types, 1, out, seen, &err);
    CHECK(rc == 0 && seen[0], "%s: rc %d %s", what, rc, err.msg);
    CHECK(!strcmp(out[0].arch, want), "%s: arch '%s', want '%s'", what, out[0].arch, want);
}

int main(void)
{
    one("<processorInfo><supportedArchitectures><item>arm64</item></supportedArchitectures>"
        "<sustainedClockSpeedInGhz>2.6</sustainedClockSpeedInGhz></processorInfo>",
        "arm64", "Graviton");
    one("<processorInfo><supportedArchitectures><item>x86_64</item></supportedArchitectures></processorInfo>", "x86_64",
        "x86_64 alone");
    /* older x86 types list both: still an x86_64 machine, whichever order EC2 sends */
    one("<processorInfo><supportedArchitectures><item>i386</item><item>x86_64</item></supportedArchitectures>"
        "</processorInfo>",
        "x86_64", "i386 then x86_64");
    one("<processorInfo><supportedArchitectures><item>x86_64</item><item>i386</item></supportedArchitectures>"
        "</processorInfo>",
        "x86_64", "x86_64 then i386");
    /* a Mac's architectures are neither: no answer, the catalogue (or a refusal) decides */
    one("<processorInfo><supportedArchitectures><item>arm64_mac</item></supportedArchitectures></processorInfo>", "",
        "arm64_mac");
    one("", "", "no processorInfo");
    return failures != 0;
}
