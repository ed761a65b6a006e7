"""The RE2 gates of the secret scan (ragls.ingest.secrets): for every detector, a linear-time pattern
that matches every line the detector could flag (a superset), so that two RE2 passes over a file
(the library's gates, ragls's rules) say whether any detector needs to look at it, and an RE2 set
for each says which lines meet which. ragls's own rules live here too (`RAGLS_RULES`: provider
tokens, credentials in context), each its own gate. tests/unit/test_secret_prefilter.py and
test_secret_recall.py check the gates against the detectors."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

import re2

# -- gates -------------------------------------------------------------------------------------
# RE2 syntax. A gate may match more than its detector, never less: Python's `re` classes are
# Unicode-aware (`\d`, `\w` match non-ASCII digits and letters), so where a detector uses one,
# its gate uses these widened classes (any non-ASCII character) instead of RE2's ASCII ones.
# No gate matches across a newline.
_D = r"[0-9\x{80}-\x{10FFFF}]"
_W = r"[0-9A-Za-z_\x{80}-\x{10FFFF}-]"
# detect-secrets' keyword list (plugins/keyword.py DENYLIST; the test pins it to the library's).
KEYWORD_DENYLIST = (
    "api_?key",
    "auth_?key",
    "service_?key",
    "account_?key",
    "db_?key",
    "database_?key",
    "priv_?key",
    "private_?key",
    "client_?key",
    "db_?pass",
    "database_?pass",
    "key_?pass",
    "password",
    "passwd",
    "pwd",
    "secret",
    "contraseña",
    "contrasena",
)
# Names of a credential-holding assignment, for the ragls rule that catches what the keyword
# list misses (`*_TOKEN`, `client-key-data`, `api-key`, `*_KEY`...). Its value must also look
# random (`secret_values.credential_like`), so `token_type = "bearer"` and `key = module.attribute` pass.
_CREDENTIAL_NAMES = r"token|secret|passw|pwd|credential|auth|bearer|key"
_ASSIGNMENT_OP = r"[A-Za-z0-9_.-]*(?:[\"'\]]{0,2}[ \t]*(?:=>|:{1,3}=|\?=|==?|:)|[\"'][ \t]*,)"
_CREDENTIAL_ASSIGNMENT = (
    rf"(?i:([A-Za-z0-9_.-]*(?:{_CREDENTIAL_NAMES}){_ASSIGNMENT_OP})[ \t]*"
    r"(\"|'|`|\[\"|\[')?([A-Za-z0-9+/=_.~-]{16,}))"
)
_PRIVATE_KEY_BEGIN = r"BEGIN [A-Z0-9 ]*PRIVATE KEY|PuTTY-User-Key-File-"


@dataclass(frozen=True, slots=True)
class Gate:
    detector: str  # "lib:<detect-secrets plugin class>" or "ragls:<rule in RAGLS_RULES>"
    precise: str  # matches every line the detector flags: found lines meet the detector
    quick: str = ""  # a cheaper superset of `precise` for the pass over a file ("": the same)


# Every plugin of the library is a gate here or listed in LIBRARY_UNUSED: the test fails when
# an upgrade adds one.
LIBRARY_GATES = (
    Gate(
        "lib:ArtifactoryDetector",
        r"AKC[a-zA-Z0-9]{10}|AP[0-9A-F\x{80}-\x{10FFFF}][a-zA-Z0-9]{8}",
        r"AKC|AP[0-9A-F\x{80}-\x{10FFFF}]",
    ),
    Gate(
        "lib:AWSKeyDetector",
        r"(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}"
        r"|(?i:aws.{0,20}(?:key|pwd|pw|pass|token).{0,20}['\"][0-9a-z/+]{40}['\"])",
        r"A3T|ABIA|ACCA|AKIA|ASIA|(?i:aws[^\n]*(?:key|pwd|pw|pass|token))",
    ),
    Gate("lib:AzureStorageKeyDetector", r"AccountKey=[a-zA-Z0-9+/=]{88}", "AccountKey="),
    Gate("lib:BasicAuthDetector", r"://[^/?#@\s]*:[^/?#@\s]*@"),
    Gate(
        "lib:CloudantDetector",
        r"(?i:(?:cloudant|cl|clou)[-_]?(?:api)?(?:key|pwd|pw|pass|token)|cloudant\.com)",
    ),
    Gate("lib:DiscordBotTokenDetector", rf"[MNO]{_W}{{23,25}}\.{_W}{{6}}\.{_W}{{27}}", rf"[MNO]{_W}{{23}}"),
    Gate("lib:GitHubTokenDetector", r"(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9_]{36}", r"gh[pousr]_"),
    Gate("lib:GitLabTokenDetector", r"(?:glpat|gldt|glft|glsoat|glrt|glcbt|glimt|glptt|glagent|gloas)-|GR1348941"),
    Gate(
        "lib:IbmCloudIamDetector",
        r"(?i:(?:key|pwd|pass|token)['\"]?\]?[ =:>]+['\"]?[a-z0-9_-]{44})",
        r"(?i:(?:key|pwd|pass|token)['\"]?\]?[ =:>]+['\"]?[a-z0-9_-]{8})",
    ),
    Gate(
        "lib:IbmCosHmacDetector",
        r"(?i:secret[-_]?(?:access)?[-_]?key['\"]?\]?[ =:>]+['\"]?[a-f0-9]{48})",
        r"(?i:secret[-_]?(?:access)?[-_]?key)",
    ),
    Gate("lib:JwtTokenDetector", r"eyJ"),
    Gate("lib:KeywordDetector", "(?i:" + "|".join(KEYWORD_DENYLIST) + ")"),
    Gate("lib:MailchimpDetector", r"[0-9a-z]{32}-us[0-9]", r"-us[0-9]"),
    Gate("lib:NpmDetector", r"/:_authToken="),
    Gate("lib:OpenAIDetector", r"T3BlbkFJ"),
    Gate("lib:PrivateKeyDetector", _PRIVATE_KEY_BEGIN),
    Gate("lib:PypiTokenDetector", r"pypi-AgE"),
    Gate("lib:SendGridDetector", r"SG\.[a-zA-Z0-9_-]{22}\.[a-zA-Z0-9_-]{43}", r"SG\."),
    Gate("lib:SlackDetector", r"(?i:xox[abposr]-|hooks\.slack\.com/services/)"),
    Gate(
        "lib:SoftlayerDetector",
        r"(?i:(?:softlayer|sl)[-_]?(?:api)?(?:key|pwd|pass|token)|api.softlayer.com/soap/)",
    ),
    Gate("lib:SquareOAuthDetector", r"sq0csp-"),
    Gate("lib:StripeDetector", r"[rs]k_live_[0-9a-zA-Z]{24}", r"k_live_"),
    Gate("lib:TelegramBotTokenDetector", rf"{_D}{{8}}:[0-9A-Za-z_-]{{35}}", rf"{_D}{{8}}:"),
    Gate("lib:TwilioKeyDetector", r"AC[a-z0-9]{32}|SK[a-z0-9]{32}", r"(?:AC|SK)[a-z0-9]{8}"),
)
# Not used: a public IP address is not a secret (and fills docs and tests); the entropy
# plugins flag every random-looking quoted string, so ragls applies their entropy measures to
# credential-named assignments only (the `assignment` rule below).
LIBRARY_UNUSED = ("IPPublicDetector", "Base64HighEntropyString", "HexHighEntropyString")


# ragls rules: what the library misses. Each pattern is its own precise gate (RE2 both times,
# so they cannot disagree); `check` names how ragls.ingest.secrets judges the value the rule found (the
# last group that took part in the match): "" flags every match.
@dataclass(frozen=True, slots=True)
class Rule:
    pattern: str
    quick: str = ""  # a cheaper superset for the one pass over a file ("": the pattern itself)
    check: str = ""  # "varied", "token", "token_mixed", "password", "phrase", "url", "bearer", "assignment",
    # "authorization", "basic_auth", "named_uuid" (secrets._CHECKS)
    named: bool = False  # group 1 is the name the value is given to (`DB_PASSWORD`, `Basic`)


_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
# A value on a command line: quoted (the quotes are not part of it) or a bare word.
_ARG = r"""(?:"([^"\n]+)"|'([^'\n]+)'|([^\s"'-][^\s"']*))"""
# A name that says its value is a password (`DB_PASSWORD`, `smtpPass`, `passphrase`, `pwd`,
# `client_secret`), and the operators that give it one: assignment in every syntax, or
# the next argument after a quoted name (`setProperty("password", ...)`, `define('DB_PASSWORD', ...)`).
_PASSWORD_NAME = r"[A-Za-z0-9_.-]*(?:passw|pwd|passphrase|secret)[A-Za-z0-9_.-]*|[A-Za-z0-9_.-]*pass"
_PASSWORD_OP = r"""(?:["'`\]]{0,2}[ \t]*(?:=>|:{1,3}=|\?=|=|:)|["'`][ \t]*,)[ \t]*@?"""
_SECRET_WORDS = r"passw|pwd|secret|token|api-?key|apikey|access-?key|private-?key|credential"

# Provider tokens: a prefix (or a fixed shape) of the provider's own, then the random part, which
# must look random (`token`: no placeholder such as `hf_xxxx...`; `token_mixed`: letters and digits
# as well, for prefixes that ordinary identifiers could start with). The shapes follow the
# providers' published formats (gitleaks' default rules list them). Quick gates are the literal
# prefix, with a few characters more where the prefix is common (`aio_`, `key-`): counted classes
# that could start anywhere (a UUID, `[0-9]{15}`) multiply the states of the automaton.
PROVIDER_TOKENS: dict[str, Rule] = {
    "onepassword": Rule(
        r"\bA3-([A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5})\b"
        r"|\bops_(eyJ[A-Za-z0-9+/]{250,})",
        "A3-|ops_eyJ",
        "token",
    ),
    "adafruit": Rule(r"\baio_([A-Za-z0-9]{28})\b", "aio_[A-Za-z0-9]{8}", "token_mixed"),
    "adobe": Rule(r"\bp8e-([A-Za-z0-9]{32})\b", "p8e-", "token"),
    "age": Rule(r"AGE-SECRET-KEY-1([QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58})", "AGE-SECRET-KEY-1", "token"),
    "airtable": Rule(r"\bpat[A-Za-z0-9]{14}\.([a-f0-9]{64})\b", r"pat[A-Za-z0-9]{14}\.", "token"),
    "alibaba": Rule(r"\bLTAI([A-Za-z0-9]{20})\b", "LTAI", "token_mixed"),
    "artifactory": Rule(r"\bcmVmd([A-Za-z0-9]{59})\b", "cmVmd", "token"),
    "asana": Rule(r"\b[0-9]/[0-9]{16}(?:/[0-9]{16})?:([a-f0-9]{32})\b", "[0-9]/[0-9]{16}", "token"),
    "atlassian": Rule(r"\bAT(?:ATT|CTT)3([A-Za-z0-9_=-]{150,})", "ATATT3|ATCTT3", "token"),
    "aws_bedrock": Rule(r"\bABSK([A-Za-z0-9+/]{100,})", "ABSK", "token"),
    "azure_ad": Rule(
        r"(?m)(?:^|[^A-Za-z0-9_~.\n])([A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34})(?:[^A-Za-z0-9_~.-]|$)",
        "Q~",
        "token_mixed",
    ),
    "bitbucket": Rule(r"\bATBB([A-Za-z0-9_=.-]{28,})", "ATBB", "token"),
    "buildkite": Rule(r"\bbkua_([a-f0-9]{40})\b", "bkua_", "token"),
    "circleci": Rule(r"\bCCIPAT_([A-Za-z0-9]{22}_[a-f0-9]{40})\b", "CCIPAT_", "token"),
    "clickhouse": Rule(r"\b4b1d([A-Za-z0-9]{38})\b", "4b1d", "token"),
    "clojars": Rule(r"(?i:\bCLOJARS_([a-z0-9]{60}))", "(?i:clojars_)", "token"),
    "cloudflare_ca": Rule(r"\bv1\.0-[a-f0-9]{24}-([a-f0-9]{146})", r"v1\.0-", "token"),
    "contentful": Rule(r"\bCFPAT-([A-Za-z0-9_-]{43})", "CFPAT-", "token"),
    "databricks": Rule(r"\bdapi([a-f0-9]{32})(?:-[0-9])?\b", "dapi", "token"),
    "digitalocean": Rule(r"\bdo[opr]_v1_([a-f0-9]{64})", "_v1_", "token"),
    "discord_webhook": Rule(
        r"(?i:discord(?:app)?\.com/api/webhooks/[0-9]{5,30}/([A-Za-z0-9_-]{40,}))",
        r"(?i:discord(?:app)?\.com/api/webhooks/)",
        "token",
    ),
    "docker_hub": Rule(r"\bdckr_(?:pat|oat)_([A-Za-z0-9_-]{27,})", "dckr_", "token"),
    "doppler": Rule(
        r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.([A-Za-z0-9_-]{40,})", r"dp\.(?:pt|st|sa|ct|scim|audit)\.", "token"
    ),
    "dropbox": Rule(r"\bsl\.(?:u\.)?([A-Za-z0-9_=-]{130,})", r"sl\.(?:u\.)?[A-Za-z0-9_=-]{16}", "token"),
    "duffel": Rule(r"\bduffel_(?:test|live)_([A-Za-z0-9_=-]{43,})", "duffel_", "token"),
    "dynatrace": Rule(r"\bdt0c01\.[A-Za-z0-9]{24}\.([A-Za-z0-9]{64})", r"dt0c01\.", "token"),
    "easypost": Rule(r"\bEZ[AT]K([A-Za-z0-9]{54})\b", "EZAK|EZTK", "token"),
    "facebook": Rule(
        r"\bEAA[MC]([A-Za-z0-9]{100,})|\b[0-9]{15,16}(?:\||%7[Cc])([0-9A-Za-z_-]{27,40})\b",
        r"EAAM|EAAC|[0-9]\||[0-9]%7[Cc]",
        "token_mixed",
    ),
    "flutterwave": Rule(r"\bFLWSECK(?:_TEST)?-([a-h0-9]{12,32})", "FLWSECK", "token"),
    "flyio": Rule(r"\bfo1_([A-Za-z0-9_-]{43})|\bfm(?:1[ar]|2)_([A-Za-z0-9+/]{100,})", "fo1_|fm1a_|fm1r_|fm2_", "token"),
    "frameio": Rule(r"\bfio-u-([A-Za-z0-9_=-]{64})", "fio-u-", "token"),
    "gitlab_more": Rule(
        r"\bglffct-([0-9A-Za-z_-]{20,})|_gitlab_session=([0-9a-z]{32})", "glffct-|_gitlab_session=", "token"
    ),
    "gocardless": Rule(
        r"(?i:gocardless[^\n]*?\b(?:live|sandbox)_([A-Za-z0-9_=-]{40}))", "(?i:gocardless)", "token_mixed"
    ),
    "grafana": Rule(
        r"\bglc_([A-Za-z0-9+/]{32,}={0,2})|\bglsa_([A-Za-z0-9]{32}_[A-Fa-f0-9]{8})\b|\beyJrIjoi([A-Za-z0-9]{70,})",
        "glc_|glsa_|eyJrIjoi",
        "token",
    ),
    "groq": Rule(r"\bgsk_([A-Za-z0-9]{52})\b", "gsk_", "token"),
    "harness": Rule(
        r"\b(?:pat|sat)\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.([A-Za-z0-9]{20})",
        r"pat\.|sat\.",
        "token",
    ),
    "heroku": Rule(r"\bHRKU-AA([0-9A-Za-z_-]{58})", "HRKU-AA", "token"),
    "hubspot": Rule(rf"\bpat-(?:na|eu|ap)[0-9]-({_UUID})\b", "pat-na|pat-eu|pat-ap", "token"),
    "huggingface": Rule(r"\b(?:hf_|api_org_)([A-Za-z0-9]{30,})\b", "hf_[A-Za-z0-9]{8}|api_org_", "token"),
    # not `favicon.ico-<hash>.png`
    "infracost": Rule(r"(?m:(?:^|[^A-Za-z0-9_.\n]))ico-([A-Za-z0-9]{32})\b", "ico-", "token_mixed"),
    "intercom": Rule(r"\bdG9rOj([A-Za-z0-9_=-]{40,})", "dG9rOj", "token"),
    "intra42": Rule(r"\bs-s4t2(?:ud|af)-([a-f0-9]{64})", "s-s4t2", "token"),
    "launchdarkly": Rule(rf"\b(?:sdk|api)-({_UUID})\b", "(?:sdk|api)-[0-9a-f]{8}-", "token"),
    "linear": Rule(r"\blin_(?:api|oauth)_([A-Za-z0-9]{40,})", "lin_api_|lin_oauth_", "token"),
    "lob": Rule(r"\b(?:live|test)_([a-f0-9]{35})\b", "(?:live|test)_[a-f0-9]{8}", "token_mixed"),
    "mailgun": Rule(r"\bkey-([a-f0-9]{32})\b", "key-[a-f0-9]{8}", "token_mixed"),
    "mapbox": Rule(r"\bsk\.eyJ[A-Za-z0-9_-]{20,}\.([A-Za-z0-9_-]{20,})", r"sk\.eyJ", "token"),
    "maxmind": Rule(r"\b[A-Za-z0-9]{6}_([A-Za-z0-9]{29})_mmk\b", "_mmk", "token"),
    "newrelic": Rule(
        r"\bNR(?:AK|II|JS|AA)-([A-Za-z0-9-]{19,})|\b([A-Za-z0-9]{32,40})NRAL\b", "NRAK-|NRII-|NRJS-|NRAA-|NRAL", "token"
    ),
    "notion": Rule(
        r"\bntn_([0-9]{11}[A-Za-z0-9]{35})\b|\bsecret_([A-Za-z0-9]{43})\b",
        "ntn_|secret_[A-Za-z0-9]{8}",
        "token_mixed",
    ),
    "octopus": Rule(r"\bAPI-([A-Z0-9]{26})\b", "API-[A-Z0-9]{8}", "token_mixed"),
    "okta": Rule(r"(?i:\b(?:okta|ssws)[^\n]*?\b(00[A-Za-z0-9_-]{40})\b)", "(?i:okta|ssws)", "token_mixed"),
    "openshift": Rule(r"\bsha256~([A-Za-z0-9_-]{43})", "sha256~", "token"),
    "perplexity": Rule(r"\bpplx-([A-Za-z0-9]{48})", "pplx-", "token"),
    "plaid": Rule(
        rf"\baccess-(?:sandbox|development|production)-({_UUID})",
        "access-sandbox-|access-development-|access-production-",
        "token",
    ),
    "planetscale": Rule(r"\bpscale_(?:tkn|oauth|pw)_([A-Za-z0-9_=.-]{32,})", "pscale_", "token"),
    "postman": Rule(r"(?i:\bPMAK-[a-f0-9]{24}-([a-f0-9]{34}))", "(?i:pmak-)", "token"),
    "prefect": Rule(r"\bpnu_([A-Za-z0-9]{36})\b", "pnu_", "token"),
    "pulumi": Rule(r"\bpul-([a-f0-9]{40})\b", "pul-[a-f0-9]{8}", "token"),
    "readme": Rule(r"\brdme_([a-z0-9]{70})\b", "rdme_", "token"),
    "render": Rule(r"\brnd_([A-Za-z0-9]{32})\b", "rnd_[A-Za-z0-9]{8}", "token_mixed"),
    "replicate": Rule(r"\br8_([A-Za-z0-9]{37})\b", "r8_", "token_mixed"),
    "rubygems": Rule(r"\brubygems_([a-f0-9]{48})\b", "rubygems_", "token"),
    "scalingo": Rule(r"\btk-us-([A-Za-z0-9_-]{48})", "tk-us-", "token"),
    "sendinblue": Rule(r"\bx(?:keysib|smtpsib)-([a-f0-9]{64}-[A-Za-z0-9]{16})", "xkeysib-|xsmtpsib-", "token"),
    "sentry": Rule(r"\bsntry[us]_([A-Za-z0-9+/=_]{40,})", "sntryu_|sntrys_", "token"),
    "settlemint": Rule(r"\bsm_(?:aat|pat|sat)_([A-Za-z0-9]{16})\b", "sm_aat_|sm_pat_|sm_sat_", "token_mixed"),
    "shippo": Rule(r"\bshippo_(?:live|test)_([a-fA-F0-9]{40})", "shippo_", "token"),
    "shopify": Rule(r"\bshp(?:at|ca|pa|ss)_([a-fA-F0-9]{32})", "shpat_|shpca_|shppa_|shpss_", "token"),
    "sidekiq": Rule(
        r"(?i:contribsys[^\n]*?\b([a-f0-9]{8}:[a-f0-9]{8})\b|\b([a-f0-9]{8}:[a-f0-9]{8})@(?:gems|enterprise)\.contribsys)",
        "(?i:contribsys)",
        "token",
    ),
    "slack_webhook": Rule(
        r"hooks\.slack\.com/(?:workflows|triggers)/([A-Za-z0-9+/]{30,})",
        r"hooks\.slack\.com/(?:workflows|triggers)/",
        "token",
    ),
    "sonar": Rule(r"\bsq[upa]_([a-f0-9]{40})\b", "sq[upa]_[a-f0-9]{8}", "token"),
    "sourcegraph": Rule(r"\bsgp_(?:[a-fA-F0-9]{16}_|local_)?([a-fA-F0-9]{40})\b", "sgp_", "token"),
    "square": Rule(r"\b(?:EAAA|sq0atp-)([A-Za-z0-9_-]{22,60})\b", "EAAA|sq0atp-", "token_mixed"),
    "supabase": Rule(r"\bsbp_([a-f0-9]{40})\b|\bsb_secret_([A-Za-z0-9_-]{30,})", "sbp_|sb_secret_", "token"),
    "tailscale": Rule(r"\btskey-(?:auth|api|client|scim|webhook)-([A-Za-z0-9]+-[A-Za-z0-9]+)", "tskey-", "token"),
    "teams_webhook": Rule(
        r"(?i:\.webhook\.office\.com/webhookb2/([A-Za-z0-9@/-]{60,}))", r"(?i:webhook\.office\.com/webhookb2/)", "token"
    ),
    "terraform_cloud": Rule(r"\b[A-Za-z0-9]{14}\.atlasv1\.([A-Za-z0-9_=-]{60,})", r"\.atlasv1\.", "token"),
    "twitter_bearer": Rule(r"\bA{22}([A-Za-z0-9%]{80,})", "A{22}", "token_mixed"),
    "typeform": Rule(r"\btfp_([A-Za-z0-9_.=-]{59,})", "tfp_", "token"),
    "vault": Rule(
        r"\bhv[sbr]\.([A-Za-z0-9_-]{24,})|(?i:vault[^\n]*?\bs\.([A-Za-z0-9]{24})\b)",
        r"hv[sbr]\.|(?i:vault)",
        "token_mixed",
    ),
    "xai": Rule(r"\bxai-([A-Za-z0-9]{80})\b", "xai-", "token"),
    "yandex": Rule(
        r"\bAQVN([A-Za-z0-9_-]{35,38})\b|\bt1\.[A-Za-z0-9_-]+={0,2}\.([A-Za-z0-9_-]{86})"
        r"|(?i:yandex[^\n]*?)\bYC([A-Za-z0-9_-]{38})\b",
        r"AQVN|t1\.|(?i:yandex)",
        "token_mixed",
    ),
}

# Providers whose keys have no shape of their own (a UUID, 32 hex digits): named after the
# provider in a credential's name, they count as credentials (the `assignment` rule's lower
# entropy limit; `provider_uuid` below).
PROVIDER_NAMES = (
    r"adafruit|airtable|algolia|asana|atlassian|jira|confluence|beamer|bitbucket|bittrex|cloudflare|codecov|cohere"
    r"|coinbase|confluent|contentful|datadog|dd_api|dd_app|discord|drone|dropbox|etsy|facebook|fastly|finicity"
    r"|finnhub|flickr|freshbooks|gitter|heroku|hubspot|intercom|jfrog|artifactory|kraken|kucoin|launchdarkly"
    r"|linkedin|looker|mailgun|mapbox|mattermost|messagebird|netlify|new_?relic|nytimes|okta|plaid|rapidapi"
    r"|sendbird|sentry|snyk|squarespace|sumo|telegram|travis|twitch|twitter|yandex|zendesk|pagerduty|twilio"
    r"|pusher|mailjet|postmark|sparkpost|mandrill|segment|mixpanel|braintree|paypal|adyen|vonage|nexmo|plivo"
)

KEYWORD_RULES: dict[str, Rule] = {
    # a UUID assigned to a credential named after a provider that issues UUID keys (Heroku, Snyk...)
    "provider_uuid": Rule(
        rf"(?i:([A-Za-z0-9_.-]*(?:{PROVIDER_NAMES})[A-Za-z0-9_.-]*){_PASSWORD_OP}[\"'`]?({_UUID}))",
        r"-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-",
        "named_uuid",
        named=True,
    ),
    # a quoted password, in any syntax: `Password: "..."` (Go), `"password" => '...'` (PHP),
    # `props.setProperty("password", "...")`, `define('DB_PASSWORD', '...')`, `.setPassword("...")`
    "password_literal": Rule(
        rf"(?i:({_PASSWORD_NAME}){_PASSWORD_OP}[\"'`]([^\"'`\s]{{6,200}})[\"'`]"
        r"|\.(?:set|with)?(?:password|passwd|passphrase|secret)[ \t]*\([ \t]*[\"'`]([^\"'`\s]{6,200})[\"'`])",
        rf"(?i:passw|pwd|passphrase|secret|pass{_PASSWORD_OP})",
        "password",
        named=True,
    ),
    # WordPress keys and salts: `define('AUTH_KEY', '<64 printable characters>')`
    "define_key": Rule(
        r"(?i:\bdefine[ \t]*\([ \t]*[\"']([A-Z0-9_]*(?:KEY|SALT|TOKEN|SECRET|PASS)[A-Z0-9_]*)[\"'][ \t]*,[ \t]*"
        r"[\"']([^\"'\n]{16,200})[\"'])",
        r"(?i:define[ \t]*\([ \t]*[\"'][A-Z0-9_]*(?:KEY|SALT|TOKEN|SECRET|PASS))",
        "phrase",
        named=True,
    ),
    # an unquoted `password=...` inside a string: libpq (`host=db password=...`), ADO.NET and JDBC
    # connection strings (`;Password=...;`), `--password=...` on a command line
    "inline_password": Rule(
        r"(?im:(?:^|[^A-Za-z0-9_\n])(?:password|passwd|pwd|pass)[ \t]*=[ \t]*([^\s;\"'`&,(){}\[\]<>|]{4,}))",
        r"(?i:(?:password|passwd|pwd|pass)[ \t]*=)",
        "password",
    ),
    # command lines that take a password as an argument
    "db_cli": Rule(
        rf"\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlsh|mariadb|mariadb-dump)\b[^\n]*?[ \t]-p{_ARG}"
        rf"|\bredis-cli\b[^\n]*?[ \t]-a[ \t]+{_ARG}",
        r"mysql|mariadb|redis-cli",
        "password",
    ),
    "sshpass": Rule(rf"\bsshpass\b[^\n]*?[ \t]-p[ \t]*{_ARG}", "sshpass", "password"),
    "registry_login": Rule(
        r"\b(?:docker|podman|buildah|skopeo|helm|oras|nerdctl|crane|apptainer|singularity)\b[^\n]*?\blogin\b"
        rf"[^\n]*?[ \t](?:-p|--password)(?:=|[ \t]+){_ARG}",
        r"login[^\n]*(?:-p|--password)",
        "password",
    ),
    "curl_user": Rule(
        r"\bcurl\b[^\n]*?[ \t](?:-u|--user)(?:=|[ \t]*)"
        r"""(?:"[^":\n]*:([^"\n]+)"|'[^':\n]*:([^'\n]+)'|[^\s"':]*:(?:"([^"\n]+)"|'([^'\n]+)'|([^\s"']+)))""",
        r"curl[^\n]*(?:-u|--user)",
        "password",
    ),
    "cli_flag": Rule(
        r"(?i:[ \t]--?(?:password|passwd|token|api-?key|client-secret|access-token|auth-token|secret-key"
        rf"|private-token)(?:=|[ \t]+)){_ARG}",
        r"(?i:-passw|-token|-api-?key|-client-secret|-access-token|-auth-token|-secret-key|-private-token)",
        "password",
    ),
    # `machine host login user password pw` (a .netrc written by a script)
    "netrc": Rule(
        r"(?i:\b(?:machine|login)[ \t]+[^\s]+[^\n]*?\bpassword[ \t]+([^\s]+))",
        r"(?i:(?:machine|login)[ \t][^\n]*password[ \t])",
        "password",
    ),
    # Authorization headers other than Bearer (below): `Basic <base64>`, `token ...`, `SSWS ...`
    "authorization": Rule(
        r"(?i:\bauthorization\b[\"']?\]?[ \t]*[:=,][ \t]*[\"'`]?[ \t]*"
        r"(basic|token|api-?token|digest|apikey|api-key|sso-key|ssws|key|accesskey|otoken)[ \t]+([A-Za-z0-9+/=._~:-]{8,}))",
        r"(?i:authorization)",
        "authorization",
        named=True,
    ),
    # a user and password handed to a client: `auth=("user", "pw")`, `HTTPBasicAuth("u", "pw")`,
    # `smtp.login("user", "pw")`; a Docker config's `"auth": "<base64 user:password>"`
    "basic_auth": Rule(
        r"(?i:(?:\bauth[ \t]*=[ \t]*\(|basicauth\(|basic_auth\(|\.login\()[ \t]*[^,\n()]*,[ \t]*[\"']([^\"'\s]{6,200})[\"']"
        r"|\"auth\"[ \t]*:[ \t]*\"([A-Za-z0-9+/]{12,}={0,2})\")",
        r"(?i:auth[ \t]*=|basicauth\(|basic_auth\(|\.login\(|\"auth\")",
        "basic_auth",
    ),
    # XML and config files: `<password>...</password>`, `<add key="SmtpPassword" value="..."/>`,
    # `<entry key="db.password">...</entry>`, `<property name="password" value="..."/>`
    "xml_element": Rule(
        rf"(?i:<([A-Za-z0-9_.:-]*(?:{_SECRET_WORDS})[A-Za-z0-9_.:-]*)>([^<\n]{{4,200}})</)",
        rf"(?i:(?:{_SECRET_WORDS})[A-Za-z0-9_.:-]*>)",
        "password",
        named=True,
    ),
    "xml_attribute": Rule(
        rf"(?i:\b(?:key|name)[ \t]*=[ \t]*\"([A-Za-z0-9_.:-]*(?:{_SECRET_WORDS})[A-Za-z0-9_.:-]*)\""
        r"(?:[ \t]+value[ \t]*=[ \t]*\"([^\"\n]{4,200})\"|[^>\n]*>([^<\n]{4,200})</))",
        rf"(?i:(?:{_SECRET_WORDS})[A-Za-z0-9_.:-]*\"(?:[ \t]+value[ \t]*=|[^>\n]*>))",
        "password",
        named=True,
    ),
    # npm's legacy `_auth` / `_password` lines outside an .npmrc
    "npm_auth": Rule(r":_(?:auth|password)[ \t]*=[ \t]*([A-Za-z0-9+/=]{8,})", r":_(?:auth|password)[ \t]*=", "token"),
}

RAGLS_RULES: dict[str, Rule] = {
    # fine-grained GitHub tokens (the library knows only ghp_/gho_/ghu_/ghs_/ghr_)
    "github_pat": Rule(r"github_pat_[A-Za-z0-9_]{22,}", "github_pat_", "varied"),
    # OpenAI (project, service-account, admin) and Anthropic keys: the library's OpenAI rule
    # needs the legacy `T3BlbkFJ` marker
    "ai_api_key": Rule(r"\bsk-(?:proj-|ant-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}", r"\bsk-", "varied"),
    # Google API keys, OAuth client secrets and access tokens
    "google": Rule(
        r"AIza[0-9A-Za-z_-]{35}|GOCSPX-[A-Za-z0-9_-]{20,}|\bya29\.[0-9A-Za-z_-]{20,}",
        r"AIza|GOCSPX-|\bya29\.",
        "varied",
    ),
    # npm tokens outside an .npmrc line
    "npm_token": Rule(r"\bnpm_[A-Za-z0-9]{36}\b", r"\bnpm_", "varied"),
    # Stripe test, restricted and prod keys, webhook signing secrets
    "stripe_more": Rule(
        r"\b[rs]k_(?:test|prod)_[0-9a-zA-Z]{24,}|\bwhsec_[A-Za-z0-9+/]{24,}", r"k_test_|k_prod_|whsec_", "varied"
    ),
    # Slack app-level, refresh and config tokens (the library needs digit groups after xox?-)
    "slack_more": Rule(
        r"(?i:\bxox[abeprs]-[A-Za-z0-9-]{10,}|\bxapp-[0-9]-[A-Za-z0-9-]{10,}|\bxoxe\.xox[a-z]-)",
        r"(?i:xox[a-z][-.]|xapp-)",
        "varied",
    ),
    **{f"token_{name}": rule for name, rule in PROVIDER_TOKENS.items()},
    # a password in a URL: the library's rule wants a user and no `&`, `=`, `+`, `$`, `,`, `;` in
    # it; people write `#` and `?` unencoded too
    "url_password": Rule(r"://[^/?#@\s:\[\]<>\"'`{}]*:([^/@\s\[\]<>\"'`{}]+)@", r"://[^/?#@\s]*:[^/@\s]*@", "url"),
    # Oracle's thin URLs put the password between a slash and the host: `jdbc:oracle:thin:app/pw@db`
    "oracle_url": Rule(r"jdbc:oracle:[a-z]+:[^/\s@:\"']+/([^@\s\"']+)@", "jdbc:oracle:", "url"),
    # credentials in a query string: `jdbc:...?user=app&password=...`, `?access_token=...`
    "url_query": Rule(
        r"(?i:[?&;](?:password|passwd|pwd|pass|secret|token|api[-_]?key|apikey|access[-_]?token"
        r"|auth|client[-_]?secret|sig)=([A-Za-z0-9%+/=_.~-]{6,}))",
        r"(?i:[?&;](?:pass|pwd|secret|token|api|access|auth|client|sig)[a-z_-]*=)",
        "url",
    ),
    # an Authorization header's bearer token
    "bearer": Rule(r"(?i:\bbearer[ \t]+([A-Za-z0-9._~+/-]{16,}=*))", r"(?i:bearer[ \t])", "bearer"),
    # a credential-named assignment with a random-looking value, quoted or not
    "assignment": Rule(
        _CREDENTIAL_ASSIGNMENT,
        rf"(?i:(?:{_CREDENTIAL_NAMES}){_ASSIGNMENT_OP})",
        "assignment",
        named=True,
    ),
    **KEYWORD_RULES,
    # the first line of a private key (its body is handled as a block: `_key_block_end`)
    "private_key": Rule(_PRIVATE_KEY_BEGIN),
}


def gates() -> list[Gate]:
    return [*LIBRARY_GATES, *(Gate(f"ragls:{n}", r.pattern, r.quick) for n, r in RAGLS_RULES.items())]


# Python's `re` in IGNORECASE mode equates these with ASCII letters (İ ı ~ i); RE2 does not.
# They are mapped to `i` for the gates (same length, so offsets and lines stay).
_GATE_FOLD = str.maketrans({"\u0130": "i", "\u0131": "i"})


def re2_options(max_mem_mb: int) -> Any:
    # RE2 caches the DFA states it has built, up to `max_mem` per expression, and when full
    # drops them and goes on. The cache only grows, by the variety of the text seen: with 32 MB
    # for each expression a process scanning files10k's 10,647 files kept 39 MB more than before,
    # 24 MB of it in the Set; with the sizes used below, 16 MB, the same redactions, the same CPU
    # time within noise (RssAnon, one process scanning every file). Every lexical worker and the
    # server keep their own.
    opts = re2.Options()
    opts.max_mem = max_mem_mb << 20
    return opts


@dataclass(frozen=True, slots=True)
class Automaton:
    quick: Any  # every quick gate of the group, one RE2: is there anything at all?
    which: Any  # the same as an RE2 Set: which of them?
    first: int  # the index of the group's first gate in gates()
    size: int


@dataclass(frozen=True, slots=True)
class Compiled:
    groups: list[Automaton]
    precise: list[tuple[str, Any]]  # (detector, compiled precise gate), in gates() order


def _automaton(quick: list[str], first: int) -> Automaton:
    which = re2.Set.SearchSet(re2_options(4))
    for q in quick:
        which.Add(q)
    which.Compile()
    return Automaton(re2.compile("|".join(f"(?:{q})" for q in quick), re2_options(8)), which, first, len(quick))


@functools.cache
def compiled() -> Compiled:
    """Two automata, the library's gates and ragls's rules: one of all of them had so many DFA
    states that it ran out of its memory and rebuilt them all through every file (on
    site-packages, 0.39 s and 1.2 s for the pass and the set against 0.20 s and 0.34 s for the
    two; more memory helped little). Each group has its own budget (8 MB, and 4 MB for its set)."""
    every = gates()
    quick = [g.quick or g.precise for g in every]
    n_lib = len(LIBRARY_GATES)
    return Compiled(
        [_automaton(quick[:n_lib], 0), _automaton(quick[n_lib:], n_lib)],
        [(g.detector, re2.compile(g.precise, re2_options(8))) for g in every],
    )


def gate_bytes(text: str) -> bytes:
    if not text.isascii() and ("\u0130" in text or "\u0131" in text):
        text = text.translate(_GATE_FOLD)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates (a client's buffer): one character each still
        return re.sub("[\ud800-\udfff]", "\ufffd", text).encode("utf-8")


def candidates(text: str) -> dict[int, list[str]]:
    """Line index -> the detectors whose precise gate matches that line."""
    c = compiled()
    data = gate_bytes(text)  # bytes: RE2 offsets need no decoding
    hit: list[int] = []
    for group in c.groups:
        if group.quick.search(data) is None:  # most files: linear passes, no line ever split
            continue
        # The Set answers from a DFA only, which gives up (answering nothing) if it runs out of
        # memory; the regex above falls back to an NFA instead. So nothing means: ask every gate.
        hit.extend(group.first + k for k in (group.which.Match(data) or range(group.size)))
    if not hit:
        return {}
    out: dict[int, list[str]] = {}
    for k in sorted(hit):
        detector, rx = c.precise[k]
        pos, line = 0, 0
        while (m := rx.search(data, pos)) is not None:
            start = m.start()
            line += data.count(b"\n", pos, start)
            out.setdefault(line, []).append(detector)
            nl = data.find(b"\n", start)
            if nl < 0:
                break
            pos, line = nl + 1, line + 1  # gates never cross a newline: on to the next line
    return out


def may_hold_secret(text: str) -> bool:
    """False only when no detector can flag any line of `text`."""
    return bool(candidates(text))
