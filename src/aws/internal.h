/* Internal to src/aws/: pieces shared by the transport, the credential chain and IMDS. */
#ifndef INSTBENCH_AWS_INTERNAL_H
#define INSTBENCH_AWS_INTERNAL_H

#include <curl/curl.h>
#include <stddef.h>
#include "instbench/aws.h"

/* AWS error bodies: JSON protocols {"__type": "[ns#]Code", "message"|"Message": ...}, query/EC2
 * XML <Code>/<Message> (first pair wins).  x_amzn_error_type is the x-amzn-ErrorType header
 * ("Code:..." form) or NULL.  code/msg are "" when nothing is recognised. */
void aws_error_parse(const char *body, size_t len, const char *x_amzn_error_type, char *code, size_t code_len,
                     char *msg, size_t msg_len);

/* Throttling and transient error codes of the SDKs' standard retry mode. */
int aws_error_is_throttling(const char *code);
int aws_error_is_transient(const char *code);
/* Codes that mean the session token expired: retried once after refreshing refreshable
 * (container, IMDS) credentials. */
int aws_error_is_expired_token(const char *code);

/* A plain (unsigned) HTTP request for IMDS and container credentials: short timeouts, no
 * retries, no TLS-less restriction (these endpoints are link-local http).  *body is malloc'd. */
typedef struct aws_plain_request {
    const char *method;
    const char *url;
    const char *const *headers; /* "Name: value" lines */
    size_t n_headers;
    double connect_timeout_s;
    double total_timeout_s;
    /* The variable whose value the URL starts with (AWS_EC2_METADATA_SERVICE_ENDPOINT), named when
     * the server does not speak the URL's scheme; NULL for a built-in URL (169.254.169.254), whose
     * scheme no user chose and which is never asked whether it speaks TLS. */
    const char *url_var;
} aws_plain_request;
/* 0 with the status and body; -1 with ERR when no answer came (no server, a timeout); -2 with ERR
 * when one came over the 1 MiB cap (an answer, but not one the endpoint should give); -3 with ERR
 * ("URL_VAR ORIGIN: the server did not speak TLS (is it http://?): curl's words") when the server
 * there speaks the other protocol than URL_VAR's scheme: a server, misnamed. */
int aws_plain_http(const aws_plain_request *req, long *status, char **body, size_t *body_len, ib_error *err);

/* A response body growing as curl delivers it, NUL-terminated, refused past max bytes.  Shared by
 * the signed transport and the plain requests (curl_util.c); returns n (taken) or 0 (curl then aborts). */
typedef struct aws_body {
    char *p;
    size_t len, cap;
    int too_big;
} aws_body;
size_t aws_body_append(aws_body *b, const char *data, size_t n, size_t max);

/* IMDSv2: a session token, then GET PATH below /latest/.  Used by identity and role credentials. */
typedef struct aws_imds_session aws_imds_session;
/* Both: 0 ok; -1 no answer (off EC2, HTTP errors); -2 an answer over aws_plain_http's cap, which is
 * a malformed answer, or a server at AWS_EC2_METADATA_SERVICE_ENDPOINT that does not speak its
 * scheme (aws_imds_identity fails on either rather than taking it for "not on EC2"). */
int aws_imds_open(aws_imds_session **out, ib_error *err);
int aws_imds_get(aws_imds_session *s, const char *path, char **body, ib_error *err);
void aws_imds_close(aws_imds_session *s);
/* Whether S's N bytes hold a byte no HTTP header can carry (below 0x20, or DEL): a line break would
 * end the header early (the rest sent as a header of its own), a NUL would cut it, and servers
 * refuse the other control bytes.  Every credential and token is checked with it before use. */
int aws_has_control(const char *s, size_t n);
/* N bytes at P set to zero in a way the compiler keeps: secrets (keys, tokens, answers holding
 * them) before their memory is freed or goes out of scope. */
void aws_wipe(void *p, size_t n);
/* OUT from the parts a source gave (TOK may be NULL), SOURCE its name ("env", "imds"); -1 with ERR
 * naming SOURCE when a part is too long or holds a control character. */
int aws_credentials_set(aws_credentials *out, const char *ak, const char *sk, const char *tok, const char *source,
                        ib_error *err);
/* IMDS role credentials (the first role listed). */
int aws_imds_role_credentials(aws_credentials *out, ib_error *err);

/* Shared config/credentials files, read as the AWS CLI reads them (Python's configparser):
 * "[name]" sections (config file: "[default]" and "[profile NAME]"; [DEFAULT] keys apply to every
 * section), "key = value" or "key: value" with lower-cased keys and trimmed values, full-line
 * '#'/';' comments, lines indented deeper than their option continue its value (an option whose
 * first line is empty is a nested block and reads as absent).  Never fails on content: what it
 * cannot read is ignored (where the AWS CLI would refuse the whole file); a later duplicate wins. */
typedef struct aws_config_file aws_config_file;
aws_config_file *aws_config_parse(const char *text, size_t len, int is_config_file);
/* NULL when the profile or key is absent.  An "[sso-session NAME]" section of the config file is
 * read as the profile AWS_SSO_SESSION_SECTION "NAME" (a name no profile header gives). */
#define AWS_SSO_SESSION_SECTION "\002sso-session "
const char *aws_config_get(const aws_config_file *f, const char *profile, const char *key);
int aws_config_has_profile(const aws_config_file *f, const char *profile);
void aws_config_free(aws_config_file *f);
/* Reads one of the files named by env (AWS_CONFIG_FILE / AWS_SHARED_CREDENTIALS_FILE) or its
 * default under ~/.aws into *OUT; *path_out names the file read.  A file that is not there (or
 * cannot be opened, or is /dev/null) gives an empty result; one that is not a regular file or is
 * over AWS_CONFIG_MAX_BYTES is -1 with ERR naming it (util_read_file), never read to its end. */
#define AWS_CONFIG_MAX_BYTES ((size_t)16 << 20) /* a real one is a few KiB, with hundreds of profiles ~100 KiB */
int aws_config_load(int is_config_file, char *path_out, size_t path_len, aws_config_file **out, ib_error *err);
/* A profile's credential_process (credential_process.c): COMMAND split as Python's shlex.split
 * splits it and run without a shell, its JSON (version 1) into OUT, source "process:PROFILE";
 * -1 with ERR naming PROFILE and WHERE (the file that set it), never the command's arguments. */
int aws_credential_process(const char *command, const char *profile, const char *where, aws_credentials *out,
                           ib_error *err);
/* One STS call (sts.c): AssumeRole signed with SOURCE, or AssumeRoleWithWebIdentity (unsigned)
 * when WEB_IDENTITY_TOKEN is given; the answer's credentials into OUT with SOURCE_NAME and their
 * expiration.  -1 with ERR naming the action and the role. */
typedef struct aws_sts_call {
    const aws_credentials *source;  /* AssumeRole's signer */
    const char *web_identity_token; /* non-NULL: AssumeRoleWithWebIdentity */
    const char *region;             /* the STS endpoint's and the signature's */
    const char *role_arn, *session_name;
    const char *external_id;           /* NULL: none */
    const char *mfa_serial, *mfa_code; /* AssumeRole's SerialNumber and TokenCode; NULL: none */
    long duration_s;                   /* 0: STS's default (one hour) */
    const char *source_name;           /* "role:NAME", "web-identity" */
} aws_sts_call;
int aws_sts_assume_role(const aws_sts_call *call, aws_credentials *out, ib_error *err);
/* REQ sent by a client made for it alone and destroyed after (the credential providers' one call:
 * sts.c, sso.c); CRED NULL for an unsigned request.  RESP as aws_client_send leaves it (free it). */
int aws_send_once(const aws_credentials *cred, const aws_request *req, aws_response *resp, ib_error *err);
/* The code of PROFILE's (in file WHERE) MFA device SERIAL, asked for on the terminal (mfa.c):
 * CODE is AWS_MFA_CODE_LEN digits; -1 with ERR where there is no terminal or the line is no code. */
#define AWS_MFA_CODE_LEN 6
int aws_mfa_code(const char *profile, const char *where, const char *serial, char code[AWS_MFA_CODE_LEN + 1],
                 ib_error *err);
/* A profile's IAM Identity Center role (sso.c): the token `aws sso login` cached for SESSION_NAME
 * (an sso-session) or START_URL (a legacy profile), then the portal's GetRoleCredentials in
 * REGION; source "sso:PROFILE".  -1 with ERR naming PROFILE (and `aws sso login` where a new token
 * is the answer). */
typedef struct aws_sso_profile {
    const char *profile;      /* for messages */
    const char *session_name; /* sso_session; NULL: a legacy profile, keyed by its start URL */
    const char *start_url, *region, *account_id, *role_name;
} aws_sso_profile;
int aws_sso_role_credentials(const aws_sso_profile *p, aws_credentials *out, ib_error *err);
/* S split into words as Python's shlex.split(S) does (POSIX rules, no comments): *ARGV is one
 * allocation (free it alone), NULL-terminated, *ARGC words; -1 with ERR for an unclosed quote or
 * a backslash at the end. */
int aws_shell_split(const char *s, char ***argv, size_t *argc, ib_error *err);
/* AWS_PROFILE, else "default"; *explicit says whether the user named it. */
const char *aws_profile_name(int *explicit_profile);

/* The container credentials URL: http://169.254.170.2 + AWS_CONTAINER_CREDENTIALS_RELATIVE_URI,
 * else AWS_CONTAINER_CREDENTIALS_FULL_URI (loopback, the ECS/EKS link-local hosts, or https).
 * 0 with the URL and *VAR the variable that chose its scheme (FULL_URI; NULL for RELATIVE_URI,
 * always http), 1 when neither is set, -1 (message) when FULL_URI is not allowed. */
int aws_container_credentials_url(char *out, size_t out_len, const char **var, ib_error *err);

/* Global libcurl initialisation, once per process (curl_util.c, with aws_body_append). */
void aws_curl_global_init(void);

/* Whether the server behind an http:// URL speaks TLS: the last origin asked and its answer, so
 * that a client's requests failing alike cost one handshake, not one each. */
typedef struct aws_tls_probe {
    double connect_timeout_s;
    int direct; /* the request bypassed any proxy (CURLOPT_NOPROXY "*"), and so does the probe */
    int asked, result;
    char origin[512];
} aws_tls_probe;
/* A transfer of URL that failed with CC (curl's text ERRBUF, maybe "") because the server does not
 * speak URL's scheme (https:// at plain HTTP; http:// at a server that completes a TLS handshake,
 * asked through PROBE, nothing sent): 1 with "VAR ORIGIN: what is wrong: curl's words" in OUT, VAR
 * naming the setting that gave the URL ("URL" when NULL); else 0 and OUT untouched. */
int aws_scheme_mismatch(CURL *easy, const char *url, CURLcode cc, const char *errbuf, const char *var,
                        aws_tls_probe *probe, char *out, size_t len);

#endif
