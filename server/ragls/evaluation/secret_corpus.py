"""A labelled corpus for the secret scan (ragls.ingest.secrets): realistic secrets in the files they turn
up in, and near misses that must stay (hashes, ids, test fixtures, templates, placeholders, prose).

Every value is generated from a fixed seed, so this module holds no secret-shaped literal for a
scanner to flag, and every run measures the same items. `python -m ragls.evaluation.secret_eval`
prints recall and false positives per family; tests/unit/test_secret_recall.py holds the goals."""

from __future__ import annotations

import base64
import json
import random
import string
import uuid
from collections.abc import Callable
from dataclasses import dataclass

ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"

# Families of secrets; a provider token's family is `provider:<name>`.
KEYWORD = "keyword in context"
PRIVATE_KEY = "private key"
URL = "URL credential"
JWT = "JWT"
ASSIGNMENT = "credential assignment"


@dataclass(frozen=True, slots=True)
class Item:
    family: str  # for a secret: `provider:<name>`, KEYWORD, ...; for a near miss: its kind
    path: str  # the file it sits in: its type picks the assignment syntax
    text: str  # the lines around it, as written in such a file
    secret: str  # the part that must not survive redaction ("" for a near miss)

    @property
    def provider(self) -> bool:
        return self.family.startswith("provider:")


class _Gen:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def rand(self, alphabet: str, n: int) -> str:
        """Random characters; where the alphabet has letters and digits, some of each."""
        mixed = any(c.isdigit() for c in alphabet) and any(c.isalpha() for c in alphabet)
        while True:
            s = "".join(self.rng.choice(alphabet) for _ in range(n))
            if not mixed or (any(c.isdigit() for c in s) and any(c.isalpha() for c in s)):
                return s

    def password(self) -> str:
        """A generated password, or one a person made up (a word, a year, a symbol)."""
        if self.rng.random() < 0.5:
            return self.rand(ALNUM, self.rng.randint(10, 16)) + self.rng.choice("!#%&*+-.@^") + self.rand(ALNUM, 3)
        word = self.rng.choice(["Summer", "Falcon", "Orchid", "Marble", "Quartz", "Harbor", "Velvet", "Tundra"])
        return word + str(self.rng.randint(1970, 2030)) + self.rng.choice("!#$%&*?@") + self.rand(ALNUM, 2)

    def uuid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def choice(self, options: list[str]) -> str:
        return self.rng.choice(options)

    def b64(self, raw_len: int) -> str:
        return base64.b64encode(bytes(self.rng.getrandbits(8) for _ in range(raw_len))).decode()


# -- provider tokens: the shapes providers publish ----------------------------------------------
# name -> (environment-variable-style name, how to make one). Shapes after the providers' own
# formats (as gitleaks' default rules and detect-secrets' plugins describe them).
_TOKENS: dict[str, tuple[str, Callable[[_Gen], str]]] = {
    "aws": ("AWS_ACCESS_KEY_ID", lambda g: "AKIA" + g.rand(UPPER_ALNUM, 16)),
    "github": ("GITHUB_TOKEN", lambda g: g.choice(["ghp_", "gho_", "ghs_", "ghu_"]) + g.rand(ALNUM, 36)),
    "github-fine-grained": ("GH_PAT", lambda g: "github_pat_" + g.rand(ALNUM, 22) + "_" + g.rand(ALNUM, 59)),
    "gitlab": ("GITLAB_TOKEN", lambda g: g.choice(["glpat-", "gldt-", "glrt-", "glffct-"]) + g.rand(URLSAFE, 20)),
    "slack": (
        "SLACK_BOT_TOKEN",
        lambda g: "xoxb-" + g.rand(string.digits, 12) + "-" + g.rand(string.digits, 13) + "-" + g.rand(ALNUM, 24),
    ),
    "slack-webhook": (
        "SLACK_WEBHOOK",
        lambda g: (
            "https://hooks.slack.com/services/T"
            + g.rand(UPPER_ALNUM, 8)
            + "/B"
            + g.rand(UPPER_ALNUM, 10)
            + "/"
            + g.rand(ALNUM, 24)
        ),
    ),
    "slack-app": (
        "SLACK_APP_TOKEN",
        lambda g: "xapp-1-A" + g.rand(UPPER_ALNUM, 10) + "-" + g.rand(string.digits, 13) + "-" + g.rand(HEX, 64),
    ),
    "stripe": (
        "STRIPE_KEY",
        lambda g: g.choice(["sk_live_", "rk_live_", "sk_test_"]) + g.rand(ALNUM, g.rng.randint(24, 99)),
    ),
    "stripe-webhook": ("STRIPE_WEBHOOK_SECRET", lambda g: "whsec_" + g.rand(ALNUM, 32)),
    "twilio": ("TWILIO_API_KEY", lambda g: "SK" + g.rand(HEX, 32)),
    "sendgrid": ("SENDGRID_API_KEY", lambda g: "SG." + g.rand(URLSAFE, 22) + "." + g.rand(URLSAFE, 43)),
    "npm": ("NPM_TOKEN", lambda g: "npm_" + g.rand(ALNUM, 36)),
    "pypi": ("PYPI_TOKEN", lambda g: "pypi-AgEIcHlwaS5vcmc" + g.rand(URLSAFE, 70)),
    "openai": ("OPENAI_API_KEY", lambda g: "sk-proj-" + g.rand(URLSAFE, 74) + "T3BlbkFJ" + g.rand(URLSAFE, 74)),
    "openai-legacy": ("OPENAI_KEY", lambda g: "sk-" + g.rand(ALNUM, 20) + "T3BlbkFJ" + g.rand(ALNUM, 20)),
    "anthropic": ("ANTHROPIC_API_KEY", lambda g: "sk-ant-api03-" + g.rand(URLSAFE, 93) + "AA"),
    "google-api": ("GOOGLE_API_KEY", lambda g: "AIza" + g.rand(URLSAFE, 35)),
    "google-oauth": ("GOOGLE_CLIENT_SECRET", lambda g: "GOCSPX-" + g.rand(URLSAFE, 28)),
    "azure-storage": (
        "AZURE_STORAGE_CONNECTION_STRING",
        lambda g: "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=" + g.rand(B64, 86) + "==",
    ),
    "azure-ad": (
        "AZURE_CLIENT_SECRET",
        lambda g: g.rand(ALNUM, 3) + g.rand(string.digits, 1) + "Q~" + g.rand(ALNUM + "_~.-", 34),
    ),
    "mailchimp": ("MAILCHIMP_API_KEY", lambda g: g.rand(HEX, 32) + "-us" + g.rand(string.digits, 2)),
    "telegram": ("TELEGRAM_BOT_TOKEN", lambda g: g.rand(string.digits, 10) + ":AA" + g.rand(URLSAFE, 33)),
    "discord-bot": (
        "DISCORD_BOT_TOKEN",
        lambda g: (
            g.choice(["M", "N", "O"]) + g.rand(URLSAFE, 23) + "." + g.rand(URLSAFE, 6) + "." + g.rand(URLSAFE, 27)
        ),
    ),
    "discord-webhook": (
        "DISCORD_WEBHOOK_URL",
        lambda g: "https://discord.com/api/webhooks/" + g.rand(string.digits, 19) + "/" + g.rand(URLSAFE, 68),
    ),
    "square": ("SQUARE_ACCESS_TOKEN", lambda g: g.choice(["EAAA", "sq0atp-"]) + g.rand(URLSAFE, 60)),
    "square-oauth": ("SQUARE_OAUTH_SECRET", lambda g: "sq0csp-" + g.rand(URLSAFE, 43)),
    "artifactory": ("ARTIFACTORY_API_KEY", lambda g: "AKCp" + g.rand(ALNUM, 69)),
    "artifactory-reference": ("JFROG_REF_TOKEN", lambda g: "cmVmd" + g.rand(ALNUM, 59)),
    "1password": (
        "OP_SECRET_KEY",
        lambda g: (
            "A3-"
            + "-".join(
                [
                    g.rand(UPPER_ALNUM, 6),
                    g.rand(UPPER_ALNUM, 11),
                    g.rand(UPPER_ALNUM, 5),
                    g.rand(UPPER_ALNUM, 5),
                    g.rand(UPPER_ALNUM, 5),
                ]
            )
        ),
    ),
    "1password-service": ("OP_SERVICE_ACCOUNT_TOKEN", lambda g: "ops_eyJ" + g.rand(B64, 260)),
    "adafruit": ("ADAFRUIT_IO_KEY", lambda g: "aio_" + g.rand(ALNUM, 28)),
    "adobe": ("ADOBE_CLIENT_SECRET", lambda g: "p8e-" + g.rand(ALNUM, 32)),
    "age": ("AGE_KEY", lambda g: "AGE-SECRET-KEY-1" + g.rand("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)),
    "airtable": ("AIRTABLE_PAT", lambda g: "pat" + g.rand(ALNUM, 14) + "." + g.rand(HEX, 64)),
    "alibaba": ("ALIBABA_ACCESS_KEY_ID", lambda g: "LTAI" + g.rand(ALNUM, 20)),
    "asana": ("ASANA_PAT", lambda g: "1/" + g.rand(string.digits, 16) + ":" + g.rand(HEX, 32)),
    "atlassian": ("JIRA_API_TOKEN", lambda g: "ATATT3" + g.rand(URLSAFE + "=", 186)),
    "aws-bedrock": ("AWS_BEARER_TOKEN_BEDROCK", lambda g: "ABSK" + g.rand(B64, 132)),
    "bitbucket": ("BITBUCKET_APP_PASSWORD", lambda g: "ATBB" + g.rand(ALNUM, 32)),
    "buildkite": ("BUILDKITE_API_TOKEN", lambda g: "bkua_" + g.rand(HEX, 40)),
    "circleci": ("CIRCLECI_TOKEN", lambda g: "CCIPAT_" + g.rand(ALNUM, 22) + "_" + g.rand(HEX, 40)),
    "clickhouse": ("CLICKHOUSE_SECRET", lambda g: "4b1d" + g.rand(ALNUM, 38)),
    "clojars": ("CLOJARS_TOKEN", lambda g: "CLOJARS_" + g.rand(LOWER_ALNUM, 60)),
    "cloudflare-ca": ("CF_ORIGIN_CA_KEY", lambda g: "v1.0-" + g.rand(HEX, 24) + "-" + g.rand(HEX, 146)),
    "contentful": ("CONTENTFUL_PAT", lambda g: "CFPAT-" + g.rand(URLSAFE, 43)),
    "databricks": ("DATABRICKS_TOKEN", lambda g: "dapi" + g.rand(HEX, 32)),
    "digitalocean": ("DIGITALOCEAN_TOKEN", lambda g: g.choice(["dop_v1_", "doo_v1_", "dor_v1_"]) + g.rand(HEX, 64)),
    "docker-hub": ("DOCKERHUB_TOKEN", lambda g: "dckr_pat_" + g.rand(URLSAFE, 27)),
    "doppler": ("DOPPLER_TOKEN", lambda g: g.choice(["dp.pt.", "dp.st.", "dp.sa."]) + g.rand(ALNUM, 43)),
    "dropbox": ("DROPBOX_TOKEN", lambda g: "sl." + g.rand(URLSAFE, 138)),
    "duffel": ("DUFFEL_TOKEN", lambda g: g.choice(["duffel_test_", "duffel_live_"]) + g.rand(URLSAFE, 43)),
    "dynatrace": ("DT_API_TOKEN", lambda g: "dt0c01." + g.rand(UPPER_ALNUM, 24) + "." + g.rand(UPPER_ALNUM, 64)),
    "easypost": ("EASYPOST_API_KEY", lambda g: g.choice(["EZAK", "EZTK"]) + g.rand(ALNUM, 54)),
    "facebook": ("FB_PAGE_TOKEN", lambda g: g.choice(["EAAC", "EAAM"]) + g.rand(ALNUM, 140)),
    "flutterwave": ("FLW_SECRET_KEY", lambda g: "FLWSECK_TEST-" + g.rand("abcdefgh0123456789", 32) + "-X"),
    "flyio": ("FLY_API_TOKEN", lambda g: g.choice(["fo1_" + g.rand(URLSAFE, 43), "fm2_" + g.rand(B64, 160)])),
    "frameio": ("FRAMEIO_TOKEN", lambda g: "fio-u-" + g.rand(URLSAFE, 64)),
    "gocardless": ("GOCARDLESS_ACCESS_TOKEN", lambda g: "live_" + g.rand(URLSAFE, 40)),
    "grafana": (
        "GRAFANA_TOKEN",
        lambda g: g.choice(["glc_" + g.rand(B64, 80), "glsa_" + g.rand(ALNUM, 32) + "_" + g.rand(HEX, 8)]),
    ),
    "groq": ("GROQ_API_KEY", lambda g: "gsk_" + g.rand(ALNUM, 52)),
    "harness": (
        "HARNESS_API_KEY",
        lambda g: "pat." + g.rand(URLSAFE, 22) + "." + g.rand(ALNUM, 24) + "." + g.rand(ALNUM, 20),
    ),
    "hashicorp-terraform": ("TFE_TOKEN", lambda g: g.rand(ALNUM, 14) + ".atlasv1." + g.rand(URLSAFE, 67)),
    "heroku": ("HEROKU_API_KEY", lambda g: "HRKU-AA" + g.rand(URLSAFE, 58)),
    "hubspot": ("HUBSPOT_ACCESS_TOKEN", lambda g: "pat-na1-" + g.uuid()),
    "huggingface": ("HF_TOKEN", lambda g: "hf_" + g.rand(string.ascii_letters, 34)),
    "huggingface-org": ("HF_ORG_TOKEN", lambda g: "api_org_" + g.rand(string.ascii_letters, 34)),
    "infracost": ("INFRACOST_API_KEY", lambda g: "ico-" + g.rand(ALNUM, 32)),
    "intercom": ("INTERCOM_TOKEN", lambda g: "dG9rOj" + g.rand(URLSAFE, 54) + "="),
    "intra42": ("FT_CLIENT_SECRET", lambda g: "s-s4t2ud-" + g.rand(HEX, 64)),
    "launchdarkly": ("LD_SDK_KEY", lambda g: "sdk-" + g.uuid()),
    "linear": ("LINEAR_API_KEY", lambda g: "lin_api_" + g.rand(ALNUM, 40)),
    "lob": ("LOB_API_KEY", lambda g: g.choice(["live_", "test_"]) + g.rand(HEX, 35)),
    "mailgun": ("MAILGUN_API_KEY", lambda g: "key-" + g.rand(HEX, 32)),
    "mapbox": (
        "MAPBOX_SECRET_TOKEN",
        lambda g: "sk.eyJ1IjoiYWNtZSIsImEiOiJ" + g.rand(ALNUM, 30) + "." + g.rand(URLSAFE, 22),
    ),
    "maxmind": ("MAXMIND_LICENSE_KEY", lambda g: g.rand(ALNUM, 6) + "_" + g.rand(ALNUM, 29) + "_mmk"),
    "microsoft-teams": (
        "TEAMS_WEBHOOK",
        lambda g: (
            f"https://acme.webhook.office.com/webhookb2/{g.uuid()}@{g.uuid()}/IncomingWebhook/{g.rand(HEX, 32)}/{g.uuid()}"
        ),
    ),
    "new-relic": (
        "NEW_RELIC_API_KEY",
        lambda g: g.choice(["NRAK-" + g.rand(UPPER_ALNUM, 27), "NRII-" + g.rand(URLSAFE, 32)]),
    ),
    "notion": ("NOTION_TOKEN", lambda g: "ntn_" + g.rand(string.digits, 11) + g.rand(ALNUM, 35)),
    "octopus": ("OCTOPUS_API_KEY", lambda g: "API-" + g.rand(UPPER_ALNUM, 26)),
    "openshift": ("OPENSHIFT_TOKEN", lambda g: "sha256~" + g.rand(URLSAFE, 43)),
    "perplexity": ("PERPLEXITY_API_KEY", lambda g: "pplx-" + g.rand(ALNUM, 48)),
    "plaid": ("PLAID_ACCESS_TOKEN", lambda g: "access-sandbox-" + g.uuid()),
    "planetscale": (
        "PLANETSCALE_TOKEN",
        lambda g: g.choice(["pscale_tkn_", "pscale_pw_", "pscale_oauth_"]) + g.rand(URLSAFE, 43),
    ),
    "postman": ("POSTMAN_API_KEY", lambda g: "PMAK-" + g.rand(HEX, 24) + "-" + g.rand(HEX, 34)),
    "prefect": ("PREFECT_API_KEY", lambda g: "pnu_" + g.rand(ALNUM, 36)),
    "pulumi": ("PULUMI_ACCESS_TOKEN", lambda g: "pul-" + g.rand(HEX, 40)),
    "readme": ("README_API_KEY", lambda g: "rdme_" + g.rand(LOWER_ALNUM, 70)),
    "render": ("RENDER_API_KEY", lambda g: "rnd_" + g.rand(ALNUM, 32)),
    "replicate": ("REPLICATE_API_TOKEN", lambda g: "r8_" + g.rand(ALNUM, 37)),
    "rubygems": ("GEM_HOST_API_KEY", lambda g: "rubygems_" + g.rand(HEX, 48)),
    "scalingo": ("SCALINGO_API_TOKEN", lambda g: "tk-us-" + g.rand(URLSAFE, 48)),
    "sendinblue": ("BREVO_API_KEY", lambda g: "xkeysib-" + g.rand(HEX, 64) + "-" + g.rand(ALNUM, 16)),
    "sentry": ("SENTRY_AUTH_TOKEN", lambda g: "sntryu_" + g.rand(HEX, 64)),
    "settlemint": ("SETTLEMINT_TOKEN", lambda g: g.choice(["sm_pat_", "sm_aat_", "sm_sat_"]) + g.rand(ALNUM, 16)),
    "shippo": ("SHIPPO_API_KEY", lambda g: g.choice(["shippo_live_", "shippo_test_"]) + g.rand(HEX, 40)),
    "shopify": ("SHOPIFY_ACCESS_TOKEN", lambda g: g.choice(["shpat_", "shpss_", "shpca_", "shppa_"]) + g.rand(HEX, 32)),
    "sidekiq": ("BUNDLE_GEMS__CONTRIBSYS__COM", lambda g: g.rand(HEX, 8) + ":" + g.rand(HEX, 8)),
    "slack-workflow": ("SLACK_WORKFLOW_URL", lambda g: "https://hooks.slack.com/workflows/" + g.rand(ALNUM, 44)),
    "sonar": ("SONAR_TOKEN", lambda g: g.choice(["squ_", "sqp_", "sqa_"]) + g.rand(HEX, 40)),
    "sourcegraph": ("SRC_ACCESS_TOKEN", lambda g: "sgp_" + g.rand(HEX, 16) + "_" + g.rand(HEX, 40)),
    "supabase": ("SUPABASE_ACCESS_TOKEN", lambda g: "sbp_" + g.rand(HEX, 40)),
    "tailscale": ("TS_AUTHKEY", lambda g: "tskey-auth-k" + g.rand(ALNUM, 11) + "-" + g.rand(ALNUM, 33)),
    "twitter": ("TWITTER_BEARER_TOKEN", lambda g: "A" * 22 + g.rand(ALNUM + "%", 90)),
    "typeform": ("TYPEFORM_TOKEN", lambda g: "tfp_" + g.rand(URLSAFE, 59)),
    "vault": (
        "VAULT_TOKEN",
        lambda g: g.choice(["hvs." + g.rand(URLSAFE, 95), "hvs." + g.rand(ALNUM, 24), "hvb." + g.rand(URLSAFE, 150)]),
    ),
    "xai": ("XAI_API_KEY", lambda g: "xai-" + g.rand(ALNUM, 80)),
    "yandex": ("YANDEX_API_KEY", lambda g: "AQVN" + g.rand(URLSAFE, 36)),
}
# Keys that only their name makes a provider's: a UUID or plain random string.
_NAMED_KEYS: dict[str, tuple[str, Callable[[_Gen], str]]] = {
    "heroku-uuid": ("HEROKU_API_KEY", lambda g: g.uuid()),
    "snyk": ("SNYK_TOKEN", lambda g: g.uuid()),
    "algolia": ("ALGOLIA_ADMIN_KEY", lambda g: g.rand(LOWER_ALNUM, 32)),
    "datadog": ("DD_API_KEY", lambda g: g.rand(HEX, 32)),
    "twitter-consumer": ("TWITTER_CONSUMER_KEY", lambda g: g.rand(ALNUM, 25)),
    "cloudflare": ("CLOUDFLARE_API_TOKEN", lambda g: g.rand(URLSAFE, 40)),
    "okta": ("OKTA_API_TOKEN", lambda g: "00" + g.rand(URLSAFE, 40)),
    "zendesk": ("ZENDESK_API_TOKEN", lambda g: g.rand(ALNUM, 40)),
    "netlify": ("NETLIFY_AUTH_TOKEN", lambda g: g.rand(URLSAFE, 43)),
    "sumologic": ("SUMO_ACCESS_KEY", lambda g: g.rand(ALNUM, 64)),
}

# How a value is written in each kind of file: (path, template with {name} and {value}). Neutral
# names too: a provider token must be found by its shape, whatever it is assigned to.
_ASSIGN: list[tuple[str, str]] = [
    ("app/settings.py", '{name} = "{value}"'),
    ("app/client.py", 'client = Client(api_key="{value}", timeout=30)'),
    ("web/src/config.ts", 'export const {camel} = "{value}";'),
    ("web/src/init.js", "init({{ value: '{value}', region: 'eu' }});"),
    ("cmd/server/main.go", '\t{camel} := "{value}"'),
    ("src/main/java/com/acme/Config.java", '    private static final String {name} = "{value}";'),
    ("src/Acme/Startup.cs", '        var {camel} = "{value}";'),
    ("public/config.php", "${camel} = '{value}';"),
    ("config/initializers/client.rb", "{name} = '{value}'"),
    ("deploy/values.yaml", "  {camel}: {value}"),
    ("config/app.json", '  "{camel}": "{value}",'),
    ("config/app.toml", '{snake} = "{value}"'),
    ("config/app.properties", "acme.{snake}={value}"),
    ("deploy/settings.ini", "{snake} = {value}"),
    ("scripts/deploy.sh", "export {name}={value}"),
    ("Dockerfile", "ENV {name}={value}"),
    ("docs/setup.md", "Set `{name}` to `{value}` before you run the tests."),
    ("deploy/pipeline.yaml", "      - run: ./release --with {value}"),
]


def _names(name: str) -> dict[str, str]:
    parts = name.lower().split("_")
    return {"name": name, "snake": "_".join(parts), "camel": parts[0] + "".join(p.title() for p in parts[1:])}


def _named(template: str) -> bool:
    return any(k in template for k in ("{name}", "{camel}", "{snake}"))


# Where a value sits in an assignment to its own name.
_NAMED_ASSIGN = [(path, template) for path, template in _ASSIGN if _named(template)]
# Providers whose keys need their name around them to be told apart.
_NEEDS_NAME = frozenset({*_NAMED_KEYS, "gocardless", "sidekiq"})


def _provider_items(g: _Gen) -> list[Item]:
    out: list[Item] = []
    for i, (provider, (name, make)) in enumerate({**_TOKENS, **_NAMED_KEYS}.items()):
        value = make(g)
        table = _NAMED_ASSIGN if provider in _NEEDS_NAME else _ASSIGN
        path, template = table[i % len(table)]
        out.append(Item(f"provider:{provider}", path, template.format(value=value, **_names(name)), value))
    return out


# -- keyword in context: a password whose only sign is where it is written ------------------------
def _keyword_items(g: _Gen) -> list[Item]:
    p = g.password
    items: list[tuple[str, str, str]] = []

    def add(path: str, template: str) -> None:
        value = p()
        items.append((path, template.format(pw=value), value))

    # command lines
    add("ops/backup.sh", "mysqldump -u root -p{pw} --single-transaction shop > shop.sql")
    add("ops/restore.sh", "mysql -h db.internal -u app -p'{pw}' shop < shop.sql")
    add("Dockerfile", "RUN mariadb -u root -p{pw} -e 'CREATE DATABASE shop'")
    add("ops/copy.sh", "sshpass -p '{pw}' scp build.tar deploy@web1.internal:/srv/")
    add("ops/ssh.sh", "sshpass -p {pw} ssh -o StrictHostKeyChecking=no deploy@web2.internal uptime")
    add(".github/workflows/release.yml", "      - run: docker login -u ci -p {pw} registry.internal")
    add("ops/push.sh", "podman login --username ci --password {pw} quay.internal")
    add("ops/helm.sh", "helm registry login registry.internal --username ci --password '{pw}'")
    add("ops/fetch.sh", "curl -u deploy:{pw} https://ci.internal/job/build/lastBuild/api/json")
    add("docs/api.md", 'curl --user "reports:{pw}" https://reports.internal/api/v1/export')
    add("ops/mirror.sh", "wget --user=mirror --password={pw} https://files.internal/dist.tar.gz")
    add("ops/db.sh", "mongodump --host db.internal --username backup --password={pw} --out /backup")
    add("ops/cache.sh", "redis-cli -h cache.internal -a '{pw}' FLUSHALL")
    add("Makefile", "\tdeploy-tool --api-key {pw} --region eu-west-1")
    add("ops/netrc.sh", "cat > ~/.netrc <<EOF\nmachine files.internal login mirror password {pw}\nEOF")
    add("docs/ftp.md", "machine ftp.internal login upload password {pw}")
    # headers
    items.append(_basic_header(g, "reports/client.py", "ARCHIVE_HEADERS = {{'Authorization': 'Basic {b64}'}}"))
    items.append(
        _basic_header(g, "docs/webhooks.md", 'curl -H "Authorization: Basic {b64}" https://hooks.internal/ping')
    )
    items.append(
        _basic_header(
            g, "src/main/java/com/acme/Http.java", '    conn.setRequestProperty("Authorization", "Basic {b64}");'
        )
    )
    for path, template in [
        ("web/src/github.js", "headers: {{ Authorization: 'token {tok}' }},"),
        ("scripts/issues.sh", 'curl -H "Authorization: token {tok}" https://api.github.com/user'),
        ("app/okta.py", 'session.headers["Authorization"] = "SSWS {tok}"'),
        ("app/reports.py", 'headers = {{"X-Api-Key": "{tok}"}}'),
        ("scripts/gitlab.sh", 'curl --header "PRIVATE-TOKEN: {tok}" https://gitlab.internal/api/v4/projects'),
        ("web/src/api.ts", "const headers = {{ 'X-Auth-Token': '{tok}' }};"),
        ("src/Acme/Client.cs", '        client.DefaultRequestHeaders.Add("X-API-KEY", "{tok}");'),
    ]:
        tok = g.rand(ALNUM, g.rng.randint(20, 40))
        items.append((path, template.format(tok=tok), tok))
    # connection strings
    add("reports/db.py", 'DSN = "host=db.internal port=5432 user=reports password={pw} dbname=reports"')
    add("src/Acme/appsettings.json", '  "Default": "Server=db.internal;Database=shop;User Id=app;Password={pw};",')
    add(
        "src/main/resources/db.properties",
        "url=jdbc:sqlserver://db.internal:1433;databaseName=shop;user=app;password={pw}",
    )
    add("config/odbc.ini", "ConnectionString = DRIVER={{ODBC Driver 18}};SERVER=db.internal;UID=app;PWD={pw};")
    add("lib/Db.php", '$dsn = "pgsql:host=db.internal;dbname=shop;user=app;password={pw}";')
    # struct fields, properties, calls
    add("internal/store/config.go", '\tPassword: "{pw}",')
    add("src/main/java/com/acme/DataSources.java", '        props.setProperty("password", "{pw}");')
    add("src/main/java/com/acme/Mail.java", '        props.put("mail.smtp.password", "{pw}");')
    add("src/main/kotlin/Db.kt", '    dataSource.setPassword("{pw}")')
    add("src/Acme/Db.cs", '            Password = "{pw}",')
    add("wp-config.php", "define( 'DB_PASSWORD', '{pw}' );")
    add("config/database.php", "        'password' => '{pw}',")
    add("config/database.rb", "  password: '{pw}',")
    add("app/mail.py", 'smtp.login("alerts@acme.test", "{pw}")')
    add("app/fetch.py", 'requests.get(url, auth=("reports", "{pw}"), timeout=30)')
    add("web/src/db.js", "const pool = new Pool({{ user: 'app', password: '{pw}' }});")
    add("app/Settings.swift", 'let smtpPass = "{pw}"')
    add("config/app.toml", 'db_pass = "{pw}"')
    add("ops/k8s.sh", "kubectl create secret generic db --from-literal=username=app --from-literal=password={pw}")
    add("ops/psql.sh", "PGPASSWORD='{pw}' psql -h db.internal -U app shop -c 'select 1'")
    add("deploy/inventory.yaml", "    ansible_password: {pw}")
    add("infra/main.tf", '  admin_password = "{pw}"')
    add("src/main/resources/oracle.properties", "db.url=jdbc:oracle:thin:app/{pw}@db.internal:1521/SHOP")
    add("deploy/compose.yaml", '      ConnectionStrings__Default: "Host=db;Username=app;Password={pw}"')
    add("config/app.json", '  "smtpPassword": "{pw}",')
    # XML and config
    add("deploy/maven/settings.xml", "      <password>{pw}</password>")
    add("src/Web.xml", '    <add key="SmtpPassword" value="{pw}" />')
    add("nuget/NuGet.xml", '      <add key="ClearTextPassword" value="{pw}" />')
    add("src/main/resources/beans.xml", '    <property name="password" value="{pw}"/>')
    add("conf/server.xml", '  <Resource name="jdbc/shop" username="app" password="{pw}" type="javax.sql.DataSource"/>')
    add("src/main/resources/app.xml", '  <entry key="db.password">{pw}</entry>')
    add("config/ldap.yaml", "bind_password: {pw}")
    add("deploy/app.ini", "smtp_password = {pw}")
    # the WordPress salts: generated, with punctuation and spaces
    salt = g.rand(ALNUM + "!#%&*+-.:;<>?@^_|~ ", 64)
    items.append(("wp-config.php", f"define( 'AUTH_KEY', '{salt}' );", salt))
    return [Item(KEYWORD, path, text, secret) for path, text, secret in items]


def _basic_header(g: _Gen, path: str, template: str) -> tuple[str, str, str]:
    b64 = base64.b64encode(f"{g.choice(['reports', 'ci', 'admin', 'deploy'])}:{g.password()}".encode()).decode()
    return path, template.format(b64=b64), b64


def _assignment_items(g: _Gen) -> list[Item]:
    """Credential-named assignments of random values, in each file's syntax."""
    out = []
    names = [
        "ORDERS_API_TOKEN",
        "JWT_SIGNING_SECRET",
        "SESSION_SECRET",
        "CLIENT_SECRET",
        "WEBHOOK_SECRET",
        "SERVICE_AUTH_KEY",
    ]
    names += ["ENCRYPTION_KEY", "API_KEY", "ACCESS_KEY", "AWS_SECRET_ACCESS_KEY", "PRIVATE_TOKEN", "REFRESH_TOKEN"]
    for i, name in enumerate(names + names[:6]):
        path, template = _NAMED_ASSIGN[(i * 5) % len(_NAMED_ASSIGN)]
        value = g.rand(g.choice([ALNUM, HEX, B64]), g.rng.randint(24, 48))
        out.append(Item(ASSIGNMENT, path, template.format(value=value, **_names(name)), value))
    return out


def _url_items(g: _Gen) -> list[Item]:
    out = []
    for path, template in [
        ("app/settings.py", 'DATABASE_URL = "postgres://app:{pw}@db.internal:5432/shop"'),
        ("config/database.yml", "  url: mysql2://app:{pw}@db.internal/shop"),
        ("web/src/mongo.ts", 'const uri = "mongodb+srv://app:{pw}@cluster0.acme.mongodb.net/shop";'),
        ("deploy/compose.yaml", "      BROKER_URL: amqp://orders:{pw}@rabbit:5672/"),
        ("app/cache.py", 'CACHE_URL = "redis://:{pw}@cache.internal:6379/0"'),
        ("scripts/clone.sh", "git clone https://deploy:{pw}@git.internal/acme/app.git"),
        ("src/main/resources/app.properties", "legacy.url=jdbc:mysql://db.internal:3306/shop?user=app&password={pw}"),
        ("docs/export.md", "Download from `https://files.internal/export.csv?access_token={tok}`."),
        ("config/proxy.ini", "proxy = http://ops:{pw}@proxy.internal:3128"),
        ("web/src/ftp.js", "const url = 'ftp://upload:{pw}@ftp.internal/incoming';"),
    ]:
        pw, tok = g.password(), g.rand(ALNUM, 32)
        secret = tok if "{tok}" in template else pw
        out.append(Item(URL, path, template.format(pw=pw, tok=tok), secret))
    return out


def _pem(g: _Gen, kind: str, lines: int) -> tuple[str, str]:
    body = [g.rand(B64, 64) for _ in range(lines)]
    return f"-----BEGIN {kind}-----\n" + "\n".join(body) + f"\n-----END {kind}-----", body[lines // 2]


def _private_key_items(g: _Gen) -> list[Item]:
    out = []
    for path, kind, wrap in [
        ("app/keys.py", "RSA PRIVATE KEY", 'SIGNING_KEY = """{pem}"""'),
        ("docs/runbook.md", "EC PRIVATE KEY", "The signer's key, while we migrate:\n\n```\n{pem}\n```"),
        ("deploy/values.yaml", "OPENSSH PRIVATE KEY", "deployKey: |\n{indented}"),
        ("config/jwt.json", "PRIVATE KEY", '{{"kid": "k1", "private_key": "{escaped}"}}'),
        ("src/main/java/com/acme/Keys.java", "PRIVATE KEY", '    static final String KEY = """\n{pem}\n""";'),
        ("tests/fixtures/signing.ts", "ENCRYPTED PRIVATE KEY", "export const key = `{pem}`;"),
        ("ops/bootstrap.sh", "DSA PRIVATE KEY", "cat > /tmp/key <<EOF\n{pem}\nEOF"),
        ("notes/pgp.txt", "PGP PRIVATE KEY BLOCK", "{pem}"),
    ]:
        pem, piece = _pem(g, kind, 8)
        text = wrap.format(
            pem=pem,
            indented="\n".join("  " + line for line in pem.split("\n")),
            escaped=pem.replace("\n", "\\n"),
        )
        out.append(Item(PRIVATE_KEY, path, "# key material below\n" + text + "\n# end", piece))
    return out


def _jwt_items(g: _Gen) -> list[Item]:
    def b64(obj: object) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    out = []
    for path, template in [
        ("tests/fixtures/session.py", 'SESSION = "{jwt}"'),
        ("web/src/auth.ts", "const token = '{jwt}';"),
        ("docs/auth.md", "Send `{jwt}` in the header."),
    ]:
        payload = {"sub": g.rand(ALNUM, 10), "role": "admin", "iat": 1_716_200_000 + g.rng.randrange(10**6)}
        sig = g.rand(URLSAFE, 43)
        jwt = f"{b64({'alg': 'HS256', 'typ': 'JWT'})}.{b64(payload)}.{sig}"
        out.append(Item(JWT, path, template.format(jwt=jwt), sig))
    return out


def secrets(seed: int = 51) -> list[Item]:
    g = _Gen(seed)
    return [
        *_provider_items(g),
        *_keyword_items(g),
        *_assignment_items(g),
        *_url_items(g),
        *_private_key_items(g),
        *_jwt_items(g),
    ]


# -- near misses -------------------------------------------------------------------------------
def near_misses(seed: int = 52) -> list[Item]:
    """What a scanner must leave alone: digests, ids, encoded data, public keys, templates and
    placeholders where a secret would go, test fixtures, prose, long names, versions."""
    g = _Gen(seed)
    out: list[Item] = []

    def add(kind: str, path: str, text: str) -> None:
        out.append(Item(kind, path, text, ""))

    for i in range(12):
        sha = g.rand(HEX, 40)
        path, template = [
            ("app/version.py", 'GIT_COMMIT = "{v}"'),
            (".pre-commit-config.yaml", "    rev: {v}"),
            ("package.json", '    "left-pad": "github:acme/left-pad#{v}",'),
            ("docs/changes.md", "Fixed in {v} (see the release notes)."),
            ("go.sum", "github.com/acme/log v0.0.0-20240101000000-{v12} h1:{b}="),
            ("scripts/pin.sh", "git checkout {v} -- vendor/"),
        ][i % 6]
        add("git SHA", path, template.format(v=sha, v12=sha[:12], b=g.rand(B64, 43)))
    for i in range(12):
        digest = g.rand(HEX, 64)
        path, template = [
            ("requirements.txt", "requests==2.32.3 --hash=sha256:{v}"),
            ("Dockerfile", "FROM python:3.12-slim@sha256:{v}"),
            ("app/checks.py", 'EXPECTED_SHA256 = "{v}"'),
            ("deploy/release.yaml", "checksum: {v}"),
            ("package-lock.json", '      "integrity": "sha512-{b}==",'),
            ("Cargo.lock", 'checksum = "{v}"'),
        ][i % 6]
        add("sha256 hash", path, template.format(v=digest, b=g.rand(B64, 86)))
    for i in range(12):
        u = g.uuid()
        path, template = [
            ("app/ids.py", 'TENANT_ID = "{u}"'),
            ("src/App.csproj", "    <ProjectGuid>{{{U}}}</ProjectGuid>"),
            ("tests/test_orders.py", 'order = Order(id="{u}", total=12)'),
            ("config/app.json", '  "request_id": "{u}",'),
            ("deploy/values.yaml", "  clusterId: {u}"),
            ("web/src/ids.ts", "export const workspaceId = '{u}';"),
        ][i % 6]
        add("UUID", path, template.format(u=u, U=u.upper()))
    for i in range(10):
        data = g.b64(g.rng.randint(24, 60))
        path, template = [
            ("tests/test_codec.py", 'assert decode("{v}") == expected'),
            ("tests/fixtures/payload.json", '  "payload": "{v}",'),
            ("web/src/codec.test.ts", "expect(encode(input)).toBe('{v}');"),
            ("src/test/java/com/acme/CodecTest.java", '        assertEquals("{v}", Codec.encode(input));'),
            ("docs/format.md", "An encoded frame looks like `{v}`."),
        ][i % 5]
        add("base64 test data", path, template.format(v=data))
    fixtures = [
        ("tests/test_login.py", 'user = User(name="alice", password="password")'),
        ("tests/test_login.py", 'login(client, "alice", password="changeme")'),
        ("deploy/app.yaml", "password: ${DB_PASSWORD}"),
        ("app/settings.py", 'API_KEY = os.environ["API_KEY"]'),
        ("app/settings.py", 'DB_PASSWORD = os.getenv("DB_PASSWORD", "")'),
        ("app/auth.py", "password = getpass.getpass()"),
        ("config/app.json", '  "password": "<your-password>",'),
        ("deploy/secret.tpl.yaml", "  DB_PASSWORD: {{ .Values.db.password }}"),
        ("ops/restore.sh", "mysql -u root -p shop < shop.sql"),
        ("ops/restore.sh", 'mysql -u root -p"$MYSQL_ROOT_PASSWORD" shop < shop.sql'),
        ("ops/fetch.sh", 'curl -u "$CI_USER:$CI_TOKEN" https://ci.internal/api/json'),
        ("ops/push.sh", 'echo "$TOKEN" | docker login -u ci --password-stdin registry.internal'),
        ("ops/copy.sh", 'sshpass -p "$SSHPASS" scp build.tar deploy@web1:/srv/'),
        ("docs/api.md", 'curl -H "Authorization: Bearer ${TOKEN}" https://api.internal/v1/me'),
        ("docs/api.md", "Authorization: Basic <base64 of user:password>"),
        ("app/reports.py", 'headers = {"X-Api-Key": api_key}'),
        ("deploy/maven/settings.xml", "      <password>${env.MAVEN_PASSWORD}</password>"),
        ("src/Web.xml", '    <add key="ApiKey" value="" />'),
        ("wp-config-sample.php", "define( 'DB_PASSWORD', 'password_here' );"),
        ("wp-config-sample.php", "define( 'AUTH_KEY', 'put your unique phrase here' );"),
        ("ops/netrc.sh", 'echo "machine files.internal login mirror password $MIRROR_PASSWORD" > ~/.netrc'),
        ("tests/test_db.py", 'DSN = "host=localhost user=test password=test dbname=test"'),
        ("config/database.yml", "  password: <%= ENV['DATABASE_PASSWORD'] %>"),
        ("internal/store/config.go", '\tPassword: os.Getenv("DB_PASSWORD"),'),
        (
            "src/main/java/com/acme/DataSources.java",
            '        props.setProperty("password", System.getenv("DB_PASSWORD"));',
        ),
        ("config/database.php", "        'password' => env('DB_PASSWORD', ''),"),
        ("app/settings.py", "SECRET_KEY = 'django-insecure-change-me'"),
        ("tests/conftest.py", 'TEST_PASSWORD = "test-password"'),
        ("tests/test_auth.py", 'assert check_password("hunter", hashed) is False'),
        ("config/app.properties", "spring.datasource.password=${SPRING_DATASOURCE_PASSWORD}"),
        ("deploy/app.ini", "password = %(db_password)s"),
        ("web/src/form.tsx", '<input type="password" name="password" placeholder="Password" />'),
        ("app/forms.py", 'password = forms.CharField(widget=forms.PasswordInput, label="Password")'),
        ("src/Acme/Db.cs", '            Password = configuration["Db:Password"],'),
        ("web/src/db.js", "const pool = new Pool({ user: 'app', password: process.env.PGPASSWORD });"),
        ("app/mail.py", "smtp.login(settings.SMTP_USER, settings.SMTP_PASSWORD)"),
        ("app/fetch.py", "requests.get(url, auth=(user, password), timeout=30)"),
        ("docs/setup.md", "Run `docker login -u <user> -p <password> registry.internal`."),
        ("docs/setup.md", "Use `curl -u user:password https://api.internal` to try it."),
        ("scripts/env.sh", 'export DB_PASSWORD="${DB_PASSWORD:?set it first}"'),
    ]
    for path, text in fixtures:
        add("template or test fixture", path, text)
    prose = [
        ("docs/auth.md", "The password must be at least 12 characters and is never logged."),
        ("docs/auth.md", "Enter your password below, then confirm it."),
        ("README.md", "Reset password: click the link in the e-mail we send you."),
        ("app/auth.py", "# TODO: hash the password with argon2 before storing it"),
        ("docs/faq.md", "Forgot your secret key? Generate a new one in the console; tokens expire after 90 days."),
        ("web/src/i18n/en.json", '  "password_hint": "Use a passphrase of four random words",'),
        ("docs/security.md", "API keys are shown once. Store the token in your password manager."),
        ("CHANGELOG.md", "- Tokens are now rotated every 24 hours (the secret store handles it)."),
        ("docs/cli.md", "`--password PASSWORD` reads the password from the next argument; prefer `--password-stdin`."),
        ("docs/cli.md", "Pass `--token TOKEN` or set `ACME_TOKEN`."),
    ]
    for path, text in prose:
        add("prose", path, text)
    identifiers = [
        ("app/auth.py", "def test_password_reset_token_expires_after_24_hours(client, frozen_clock):"),
        ("app/keys.py", "KEY_PREFIX_FOR_SESSION_TOKENS = 'session:'"),
        (
            "src/main/java/com/acme/AbstractSecretKeyFactoryBean.java",
            "public abstract class AbstractSecretKeyFactoryBean implements FactoryBean<SecretKey> {",
        ),
        ("web/src/auth.ts", "export function useRefreshTokenRotationWithExponentialBackoff2() {"),
        ("app/settings.py", "PASSWORD_HASHERS = ['django.contrib.auth.hashers.Argon2PasswordHasher']"),
        (
            "app/settings.py",
            "AUTH_PASSWORD_VALIDATORS = [{'NAME': 'django.contrib.auth.password_validation.MinimumLengthValidator'}]",
        ),
        ("config/app.yaml", "token_endpoint: https://auth.internal/oauth2/v1/token"),
        ("config/app.yaml", "secretName: orders-db-credentials-v2"),
        ("deploy/values.yaml", "  existingSecret: postgresql-auth-secret"),
        ("app/tokens.py", "token_type = 'bearer'"),
        ("app/tokens.py", "TOKEN_URL = 'https://auth.example.com/oauth/token'"),
        ("app/keys.py", "cache_key = f'user:{user_id}:sessions'"),
        ("cmd/server/main.go", '\tsecretKeyRef := corev1.SecretKeySelector{Key: "password"}'),
        ("src/Acme/Auth.cs", '    public const string ApiKeyHeaderName = "X-Api-Key";'),
        (
            "config/app.properties",
            "security.oauth2.client.registration.acme.client-authentication-method=client_secret_basic",
        ),
    ]
    for path, text in identifiers:
        add("long identifier", path, text)
    versions = [
        ("pyproject.toml", 'version = "1.2.3-beta.4+build.5678"'),
        ("deploy/compose.yaml", "    image: postgres:16.2-alpine3.19"),
        ("package.json", '    "@acme/sdk": "^12.4.0-rc.1",'),
        ("build.gradle", "implementation 'com.acme:client-sdk:2024.03.15-SNAPSHOT'"),
        ("go.mod", "require github.com/acme/log v0.0.0-20240101000000-3f2a9c4b1d7e"),
        ("Dockerfile", "ARG NODE_VERSION=20.11.1-bookworm-slim"),
        ("docs/changes.md", "Upgrade from v2.14.0-rc.1 to v2.14.0."),
        ("config/app.toml", 'api_version = "2023-10-16"'),
    ]
    for path, text in versions:
        add("version string", path, text)
    for i in range(5):
        png = "iVBORw0KGgoAAAANSUhEUgAA" + g.rand(B64, g.rng.randint(300, 900))
        path, template = [
            ("web/src/logo.ts", "export const logo = 'data:image/png;base64,{v}';"),
            ("web/styles/app.css", ".logo {{ background: url(data:image/png;base64,{v}); }}"),
            ("docs/readme.md", "![logo](data:image/png;base64,{v})"),
            ("tests/fixtures/image.json", '  "thumbnail": "data:image/png;base64,{v}",'),
            ("app/assets.py", 'ICON = "data:image/gif;base64,{v}"'),
        ][i]
        add("base64 image", path, template.format(v=png))
    placeholders = [
        ("docs/hub.md", "Set `HF_TOKEN=hf_xxx` before downloading the model."),
        ("app/settings.py", 'HF_TOKEN = "hf_' + "x" * 34 + '"'),
        ("docs/github.md", "export GITHUB_TOKEN=ghp_" + "X" * 36),
        ("docs/openai.md", "OPENAI_API_KEY=sk-..."),
        ("docs/slack.md", "SLACK_BOT_TOKEN=xoxb-your-bot-token"),
        ("docs/stripe.md", "STRIPE_KEY=sk_test_" + "x" * 24),
        ("docs/gitlab.md", "GITLAB_TOKEN=glpat-" + "x" * 20),
        ("docs/vault.md", "VAULT_TOKEN=hvs.XXXXXXXXXXXXXXXXXXXXXXXX"),
        ("docs/databricks.md", "DATABRICKS_TOKEN=dapi" + "0" * 32),
        ("docs/shopify.md", "SHOPIFY_ACCESS_TOKEN=shpat_" + "0" * 32),
        ("docs/npm.md", "NPM_TOKEN=npm_" + "a" * 36),
        ("deploy/values.yaml", "  apiKey: <your-api-key>"),
        ("config/app.json", '  "token": "YOUR_TOKEN_HERE",'),
        ("docs/aws.md", "aws_secret_access_key = <secret>"),
        ("docs/sentry.md", "SENTRY_AUTH_TOKEN=sntryu_" + "0" * 64),
        ("docs/linear.md", "LINEAR_API_KEY=lin_api_" + "x" * 40),
        ("docs/doppler.md", "DOPPLER_TOKEN=dp.pt." + "x" * 43),
        ("docs/pulumi.md", "PULUMI_ACCESS_TOKEN=pul-" + "0" * 40),
    ]
    for path, text in placeholders:
        add("placeholder token", path, text)
    public = [
        ("deploy/authorized_keys.md", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + g.rand(B64, 43) + " deploy@ci"),
        ("docs/ssh.md", "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ" + g.rand(B64, 340) + " ops@bastion"),
        (
            "certs/ca.md",
            "-----BEGIN CERTIFICATE-----\n"
            + "\n".join(g.rand(B64, 64) for _ in range(5))
            + "\n-----END CERTIFICATE-----",
        ),
        (
            "docs/gpg.md",
            "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n"
            + "\n".join(g.rand(B64, 64) for _ in range(4))
            + "\n-----END PGP PUBLIC KEY BLOCK-----",
        ),
        (
            "app/verify.py",
            'PUBLIC_KEY = "-----BEGIN PUBLIC KEY-----\\n' + g.rand(B64, 64) + '\\n-----END PUBLIC KEY-----"',
        ),
        ("web/src/stripe.ts", "const stripe = loadStripe('pk_live_" + g.rand(ALNUM, 24) + "');"),
        ("web/index.html", '<script nonce="' + g.rand(B64, 22) + '==">boot()</script>'),
        ("config/sentry.yaml", "dsn_host: o" + g.rand(string.digits, 6) + ".ingest.sentry.io"),
    ]
    for path, text in public:
        add("public key or id", path, text)
    urls = [
        ("app/settings.py", 'DATABASE_URL = "postgres://localhost:5432/shop"'),
        ("scripts/clone.sh", "git clone ssh://git@git.internal/acme/app.git"),
        ("docs/setup.md", "Clone `git@github.com:acme/app.git` and run `make`."),
        ("config/app.yaml", "broker: amqp://guest:guest@localhost:5672/"),
        ("docs/db.md", "Connect with `postgres://user:password@localhost/db`."),
        ("web/src/api.ts", "const base = 'https://api.acme.test/v1/orders?page=2&per_page=50';"),
        ("app/oauth.py", 'REDIRECT = "https://app.acme.test/callback?state={state}&code={code}"'),
        ("docs/oauth.md", "The provider redirects to `/callback?code=...&state=...`."),
    ]
    for path, text in urls:
        add("URL without a credential", path, text)
    code = [
        ("web/styles/theme.css", ".btn { color: #1f6feb; background: #f6f8fa; border-color: #d0d7de; }"),
        ("src/crc.c", "static const uint32_t POLY = 0xEDB88320u; /* reflected CRC-32 */"),
        ("app/net.py", 'ALLOWED = ["10.0.0.0/8", "192.168.1.17", "fe80::1ff:fe23:4567:890a"]'),
        ("app/dates.py", 'STAMP_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"'),
        ("tests/test_phone.py", 'assert normalise("+49 30 1234567") == "+49301234567"'),
        ("app/regex.py", r"EMAIL = re.compile(r'^[\w.+-]+@[\w-]+\.[\w.-]+$')"),
        ("web/src/colors.ts", "export const palette = ['#0b1f3a', '#3d5a80', '#98c1d9', '#e0fbfc', '#ee6c4d'];"),
        ("app/bits.py", "MASK = 0xFFFF_0000_FFFF_0000"),
        ("src/main/java/com/acme/Ids.java", "    private static final long SEED = 0x5DEECE66DL;"),
        ("app/format.py", 'LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"'),
        ("app/auth.py", "password_hash = bcrypt.hashpw(password.encode('utf-8'), bcrypt.gensalt())"),
        ("app/auth.py", 'password = password.encode("latin1")'),
        ("app/crypto.py", "key = hashlib.pbkdf2_hmac('sha256', password, salt, 600_000)"),
        ("app/keys.py", 'KEY_FILE = "/etc/acme/keys/signing-2024.pem"'),
        ("app/secrets.py", 'secret = client.get_secret_value(SecretId="prod/orders/db")'),
    ]
    for path, text in code:
        add("ordinary code", path, text)
    references = [
        ("infra/main.tf", "  password = var.db_password"),
        ("infra/main.tf", "  password = random_password.db.result"),
        (".github/workflows/release.yml", "          password: ${{ secrets.REGISTRY_PASSWORD }}"),
        ("deploy/inventory.yaml", '    ansible_become_password: "{{ vault_become_pass }}"'),
        ("deploy/templates/secret.yaml.tpl", "  password: {{ .Values.password | quote }}"),
        ("deploy/compose.yaml", "      POSTGRES_PASSWORD_FILE: /run/secrets/db_password"),
        ("config/app.properties", "spring.datasource.password="),
        ("src/Acme/Db.cs", "            Password = string.Empty,"),
        ("src/main/java/com/acme/Login.java", "        char[] password = new char[0];"),
        ("web/src/npm.js", "const token = process.env.NPM_TOKEN;"),
        ("app/models.py", "    api_key: str | None = None"),
        ("web/src/login.js", "const password = req.body.password;"),
        ("public/login.php", "$password = $_POST['password'];"),
        ("config/database.rb", '  password: ENV.fetch("DB_PASSWORD"),'),
        ("cmd/server/main.go", "	Password: cfg.Password,"),
        ("cmd/server/main.go", '	Password: "",'),
        ("cmd/server/main.go", '	SecretKey: []byte(os.Getenv("SECRET_KEY")),'),
        ("deploy/maven/settings.xml", "      <password></password>"),
        ("deploy/maven/settings.xml", "      <password>***</password>"),
        ("config/app.xml", "  <token>${TOKEN}</token>"),
        ("deploy/deployment.yaml", "              secretKeyRef: {name: orders-db, key: password}"),
        ("docs/setup.md", "mysql -u root -p mydb"),
        ("ops/psql.sh", "PGPASSWORD=$(cat /run/secrets/pg) psql -h db -U app shop"),
        ("ops/mirror.sh", "wget --user=mirror --password-file ~/.mirror-pw https://files.internal/dist.tar.gz"),
        ("ops/deploy.sh", "deploy-tool --token-file /run/secrets/deploy-token --region eu-west-1"),
        ("docs/api.md", "Authorization: Basic dXNlcjpwYXNzd29yZA=="),
        ("docs/api.md", "curl -u admin:admin http://localhost:8080/api"),
        ("app/settings.py", "DB_PASSWORD = None"),
        ("app/settings.py", "password = ''"),
        ("web/src/api.ts", "const apiKey = request.headers.get('X-Api-Key');"),
        ("app/views.py", 'token = request.headers.get("Authorization", "").removeprefix("Bearer ")'),
        ("app/jobs.py", "token = tokens[index]"),
    ]
    for path, text in references:
        add("template or test fixture", path, text)
    for i in range(14):
        h = g.rand(HEX, g.choice([16, 32]))
        path, template = [
            ("app/tracing.py", 'trace_id = "{v}"'),
            ("tests/test_cache.py", 'assert cache.get("{v}") is None'),
            ("web/src/etag.ts", "const etag = '\"{v}\"';"),
            ("app/lfs.md", "oid sha256:{v}{v}"),
            ("tests/fixtures/span.json", '  "span_id": "{v}",'),
            ("app/cache.py", 'cache_key = "{v}{v}"'),
            ("config/assets.yaml", "key: {v}{v}"),
        ][i % 7]
        add("hex id", path, template.format(v=h))
    for i in range(8):
        b = g.b64(48)
        path, template = [
            ("web/index.html", '<script src="/app.js" integrity="sha384-{v}" crossorigin="anonymous"></script>'),
            ("app/crypto_test.py", 'NONCE = base64.b64decode("{v}")'),
            ("tests/fixtures/frames.txt", "frame 7: {v}"),
            ("docs/protocol.md", "The server answers `{v}` when the handshake succeeds."),
        ][i % 4]
        add("base64 test data", path, template.format(v=b))
    return out


def file_type(path: str) -> str:
    """The kind of file an item sits in, for the report (`.py`, `Dockerfile`, ...)."""
    name = path.rsplit("/", 1)[-1]
    return name if "." not in name else name[name.rindex(".") :]
