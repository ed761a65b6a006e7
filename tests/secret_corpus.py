"""A workspace of realistic secrets in the places they end up (issue 37, finding 3): provider
tokens, credential assignments in every config syntax, quoted and not, upper-case and
prefixed names, URLs with passwords, JWTs, private keys with their bodies, kubeconfigs.

Values are generated from a fixed seed, so this file holds no secret-shaped literal for a
scanner to flag and every run plants the same ones."""

from __future__ import annotations

import base64
import json
import random
import string
from dataclasses import dataclass, field
from pathlib import Path

from ragls.evaluation.secret_corpus import ALNUM, B64, HEX, URLSAFE
from ragls.evaluation.secret_corpus import UPPER_ALNUM as UPPER_DIGITS

# How a file is expected to come out: its secret lines redacted and the rest indexed, skipped
# whole by content (`secret_content`), or never read because of its name (`secret`).
REDACTED = "redacted"
SECRET_CONTENT = "secret_content"
SECRET_FILE = "secret"


@dataclass
class PlantedFile:
    path: str
    text: str
    outcome: str
    marker: str  # a word only this file holds, outside every secret line
    secrets: list[str] = field(default_factory=list)  # the random part of each planted secret


@dataclass
class Corpus:
    files: list[PlantedFile]

    @property
    def secrets(self) -> list[str]:
        return [s for f in self.files for s in f.secrets]

    def write(self, root: Path) -> None:
        for f in self.files:
            p = root / f.path
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(f.text)

    def leaks(self, seen: str) -> list[str]:
        """The planted secrets that appear in `seen`, whole or as a 12-character piece."""
        out = []
        for s in self.secrets:
            pieces = {s, s[:12], s[len(s) // 2 - 6 : len(s) // 2 + 6], s[-12:]}
            if any(p in seen for p in pieces):
                out.append(s)
        return out


class _Gen:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def rand(self, alphabet: str, n: int) -> str:
        while True:
            s = "".join(self.rng.choice(alphabet) for _ in range(n))
            # Random tokens mix digits and letters (where the alphabet has both).
            mixed = any(c.isdigit() for c in alphabet) and any(c.isalpha() for c in alphabet)
            if not mixed or (any(c.isdigit() for c in s) and any(c.isalpha() for c in s)):
                return s

    def password(self) -> str:
        return self.rand(ALNUM, 14) + self.rng.choice("!#%&*+-.") + self.rand(ALNUM, 3)

    def pem_body(self, lines: int, width: int = 64) -> list[str]:
        return [self.rand(B64, width) for _ in range(lines)]

    def jwt(self) -> tuple[str, str]:
        def b64(obj: object) -> str:
            return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

        payload = {"sub": self.rand(ALNUM, 12), "role": "admin", "iat": 1716200000 + self.rng.randrange(10**6)}
        sig = self.rand(URLSAFE, 43)
        return f"{b64({'alg': 'HS256', 'typ': 'JWT'})}.{b64(payload)}.{sig}", sig


def build(seed: int = 37) -> Corpus:
    g = _Gen(seed)
    files: list[PlantedFile] = []

    def add(path: str, outcome: str, marker: str, body: str, secrets: list[str]) -> None:
        assert all(s in body for s in secrets), path
        files.append(PlantedFile(path, body, outcome, marker, secrets))

    # -- Python settings: provider tokens and upper-case/prefixed names ----------------------
    aws_id = g.rand(UPPER_DIGITS, 16)
    aws_secret = g.rand(B64, 40)
    jwt_secret = g.rand(ALNUM, 32)
    db_password = g.password()
    ghp = g.rand(ALNUM, 36)
    gh_pat = g.rand(ALNUM, 22) + "_" + g.rand(ALNUM, 59)
    glpat = g.rand(ALNUM, 20)
    google = g.rand(URLSAFE, 35)
    stripe = g.rand(ALNUM, 34)
    slack_bot = g.rand(ALNUM, 24)
    slack_hook = g.rand(ALNUM, 24)
    twilio_sid = g.rand(HEX, 32)
    twilio_token = g.rand(HEX, 32)
    sendgrid = g.rand(URLSAFE, 22) + "." + g.rand(URLSAFE, 43)
    openai = g.rand(ALNUM, 40) + "T3BlbkFJ" + g.rand(ALNUM, 40)
    anthropic = g.rand(URLSAFE, 93)
    pg_password = g.rand(ALNUM, 20)
    redis_password = g.rand(ALNUM, 24)
    npm = g.rand(ALNUM, 36)
    pypi = g.rand(URLSAFE, 80)
    azure = g.rand(B64, 86)
    rsa_body = g.pem_body(12)
    settings_py = f'''"""Deployment settings for the billing service (settings_loader_marker)."""

import os

BILLING_OPTION_0 = 0  # tuning knob 0 of the invoice batcher
BILLING_OPTION_1 = 7  # tuning knob 1 of the invoice batcher
BILLING_OPTION_2 = 14  # tuning knob 2 of the invoice batcher
BILLING_OPTION_3 = 21  # tuning knob 3 of the invoice batcher
BILLING_OPTION_4 = 28  # tuning knob 4 of the invoice batcher
BILLING_OPTION_5 = 35  # tuning knob 5 of the invoice batcher
BILLING_OPTION_6 = 42  # tuning knob 6 of the invoice batcher
BILLING_OPTION_7 = 49  # tuning knob 7 of the invoice batcher
BILLING_OPTION_8 = 56  # tuning knob 8 of the invoice batcher
BILLING_OPTION_9 = 63  # tuning knob 9 of the invoice batcher
BILLING_OPTION_10 = 70  # tuning knob 10 of the invoice batcher
BILLING_OPTION_11 = 77  # tuning knob 11 of the invoice batcher
BILLING_OPTION_12 = 84  # tuning knob 12 of the invoice batcher
BILLING_OPTION_13 = 91  # tuning knob 13 of the invoice batcher
BILLING_OPTION_14 = 98  # tuning knob 14 of the invoice batcher
BILLING_OPTION_15 = 105  # tuning knob 15 of the invoice batcher
BILLING_OPTION_16 = 112  # tuning knob 16 of the invoice batcher
BILLING_OPTION_17 = 119  # tuning knob 17 of the invoice batcher
BILLING_OPTION_18 = 126  # tuning knob 18 of the invoice batcher
BILLING_OPTION_19 = 133  # tuning knob 19 of the invoice batcher
BILLING_OPTION_20 = 140  # tuning knob 20 of the invoice batcher
BILLING_OPTION_21 = 147  # tuning knob 21 of the invoice batcher
BILLING_OPTION_22 = 154  # tuning knob 22 of the invoice batcher
BILLING_OPTION_23 = 161  # tuning knob 23 of the invoice batcher
BILLING_OPTION_24 = 168  # tuning knob 24 of the invoice batcher
BILLING_OPTION_25 = 175  # tuning knob 25 of the invoice batcher
BILLING_OPTION_26 = 182  # tuning knob 26 of the invoice batcher
BILLING_OPTION_27 = 189  # tuning knob 27 of the invoice batcher
BILLING_OPTION_28 = 196  # tuning knob 28 of the invoice batcher
BILLING_OPTION_29 = 203  # tuning knob 29 of the invoice batcher
BILLING_OPTION_30 = 210  # tuning knob 30 of the invoice batcher
BILLING_OPTION_31 = 217  # tuning knob 31 of the invoice batcher
BILLING_OPTION_32 = 224  # tuning knob 32 of the invoice batcher
BILLING_OPTION_33 = 231  # tuning knob 33 of the invoice batcher
BILLING_OPTION_34 = 238  # tuning knob 34 of the invoice batcher
BILLING_OPTION_35 = 245  # tuning knob 35 of the invoice batcher
BILLING_OPTION_36 = 252  # tuning knob 36 of the invoice batcher
BILLING_OPTION_37 = 259  # tuning knob 37 of the invoice batcher
BILLING_OPTION_38 = 266  # tuning knob 38 of the invoice batcher
BILLING_OPTION_39 = 273  # tuning knob 39 of the invoice batcher

AWS_ACCESS_KEY_ID = "AKIA{aws_id}"
AWS_SECRET_ACCESS_KEY = "{aws_secret}"
JWT_SIGNING_SECRET = "{jwt_secret}"
db_password = "{db_password}"
GITHUB_TOKEN = "ghp_{ghp}"
GITHUB_FINE_GRAINED = "github_pat_{gh_pat}"
GITLAB_CI_TOKEN = "glpat-{glpat}"
GOOGLE_MAPS = "AIza{google}"
STRIPE_LIVE = "sk_live_{stripe}"
SLACK_BOT = "xoxb-{g.rand(string.digits, 11)}-{g.rand(string.digits, 13)}-{slack_bot}"
ALERTS_WEBHOOK = "https://hooks.slack.com/services/T{g.rand(UPPER_DIGITS, 8)}/B{g.rand(UPPER_DIGITS, 10)}/{slack_hook}"
TWILIO_ACCOUNT_SID = "AC{twilio_sid}"
TWILIO_AUTH_TOKEN = "{twilio_token}"
SENDGRID = "SG.{sendgrid}"
OPENAI_KEY = "sk-proj-{openai}"
ANTHROPIC = "sk-ant-api03-{anthropic}AA"
DATABASE_URL = "postgres://billing:{pg_password}@db.internal:5432/billing"
CACHE_URL = "redis://:{redis_password}@cache.internal:6379/0"
NPM_PUBLISH = "npm_{npm}"
PYPI_UPLOAD = "pypi-AgEIcHlwaS5vcmc{pypi}"
AZURE_BLOBS = "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={azure}==;EndpointSuffix=core.windows.net"

SIGNING_KEY_PEM = """-----BEGIN RSA PRIVATE KEY-----
{chr(10).join(rsa_body)}
-----END RSA PRIVATE KEY-----"""


def load_billing_settings(env=os.environ):
    """Read the billing service settings, preferring the environment."""
    return {{"region": env.get("AWS_REGION", "eu-west-1"), "debug": env.get("DEBUG") == "1"}}
'''
    add(
        "billing/settings.py",
        REDACTED,
        "settings_loader_marker",
        settings_py,
        [
            aws_id,
            aws_secret,
            jwt_secret,
            db_password,
            ghp,
            gh_pat,
            glpat,
            google,
            stripe,
            slack_bot,
            slack_hook,
            twilio_sid,
            twilio_token,
            sendgrid,
            openai,
            anthropic,
            pg_password,
            redis_password,
            npm,
            pypi,
            azure,
            *rsa_body,
        ],
    )

    # -- TypeScript: camelCase names, bearer header, JWT, webhook secret ----------------------
    api_key = g.rand(ALNUM, 32)
    rk = g.rand(ALNUM, 30)
    bearer = g.rand(URLSAFE, 40)
    jwt, jwt_sig = g.jwt()
    whsec = g.rand(ALNUM, 32)
    ts = f"""// Client configuration for the storefront (storefront_client_marker).
export const apiKey = "{api_key}";
export const STRIPE_RESTRICTED = 'rk_live_{rk}';
export const sessionToken = "{jwt}";
export const webhookSecret = "whsec_{whsec}";

export const currency = "EUR";
export const locale = "de-DE";
export const pageSize = 48;
export const retryDelaysMs = [250, 1000, 4000];
export const featureFlags = {{ wishlist: true, giftCards: false, reviews: true }};

export function storefrontHeaders(): Record<string, string> {{
  return {{ Authorization: "Bearer {bearer}", Accept: "application/json" }};
}}
"""
    add("web/src/config.ts", REDACTED, "storefront_client_marker", ts, [api_key, rk, jwt_sig, whsec, bearer])

    # -- INI and properties-style config: unquoted values --------------------------------------
    ini_password = g.password()
    ini_secret_key = g.rand(ALNUM, 40)
    ini_aws = g.rand(B64, 40)
    ini = f"""; Reporting service configuration (report_ini_marker)
[database]
host = db.internal
password = {ini_password}

[django]
secret_key = {ini_secret_key}

[aws]
region = eu-west-1
aws_secret_access_key = {ini_aws}
"""
    add("deploy/report.ini", REDACTED, "report_ini_marker", ini, [ini_password, ini_secret_key, ini_aws])

    props_password = g.password()
    props_token = g.rand(HEX, 32)
    jdbc_password = g.rand(ALNUM, 18)
    props = f"""# Mail and datasource properties (mailer_properties_marker)
spring.application.name=mailer
spring.datasource.username=mailer
spring.datasource.url=jdbc:postgresql://db.internal:5432/mail
mail.smtp.host=smtp.internal
mail.smtp.port=587
mail.smtp.starttls.enable=true
spring.datasource.password={props_password}
mail.smtp.auth.token={props_token}
legacy.jdbc.url=jdbc:mysql://db.internal:3306/mail?user=mailer&password={jdbc_password}
"""
    add("deploy/mailer.cfg", REDACTED, "mailer_properties_marker", props, [props_password, props_token, jdbc_password])

    # -- docker compose ------------------------------------------------------------------------
    pg = g.password()
    mysql = g.password()
    redis_pw = g.rand(ALNUM, 20)
    api_token = g.rand(HEX, 40)
    compose = f"""# Local stack for the orders service (orders_compose_marker)
services:
  db:
    image: postgres:16
    environment:
      POSTGRES_USER: orders
      POSTGRES_PASSWORD: {pg}
  legacy:
    image: mysql:8
    environment:
      - MYSQL_ROOT_PASSWORD={mysql}
  cache:
    image: redis:7
    command: ["redis-server", "--requirepass", "x"]
    environment:
      REDIS_PASSWORD: "{redis_pw}"
  worker:
    environment:
      ORDERS_API_TOKEN: {api_token}
"""
    add("docker-compose.yml", REDACTED, "orders_compose_marker", compose, [pg, mysql, redis_pw, api_token])

    # -- Helm values: YAML, camelCase keys, an SSH key block ----------------------------------
    values_api = g.rand(ALNUM, 32)
    values_client_secret = g.rand(ALNUM, 36)
    smtp = g.password()
    ssh_body = g.pem_body(7, 70)
    values = f"""# Helm values for the notifier chart (notifier_values_marker)
replicaCount: 2
notifier:
  apiKey: {values_api}
  clientSecret: "{values_client_secret}"
  smtpPassword: {smtp}
  deployKey: |
    -----BEGIN OPENSSH PRIVATE KEY-----
{chr(10).join("    " + line for line in ssh_body)}
    -----END OPENSSH PRIVATE KEY-----
resources:
  limits:
    cpu: 500m
    memory: 256Mi
  requests:
    cpu: 100m
    memory: 128Mi
service:
  type: ClusterIP
  port: 8080
ingress:
  enabled: true
  host: notifier.internal
  tls: true
probes:
  liveness: /healthz
  readiness: /readyz
"""
    add(
        "charts/notifier/values.yaml",
        REDACTED,
        "notifier_values_marker",
        values,
        [values_api, values_client_secret, smtp, *ssh_body],
    )

    # -- JSON ----------------------------------------------------------------------------------
    json_password = g.password()
    json_api_key = g.rand(ALNUM, 32)
    json_pk = g.rand(B64, 120)
    gocspx = g.rand(URLSAFE, 28)
    service_json = f"""{{
  "service": "inventory_json_marker",
  "password": "{json_password}",
  "api_key": "{json_api_key}",
  "client_secret": "GOCSPX-{gocspx}",
  "signing": {{"private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEv{json_pk}\\n-----END PRIVATE KEY-----\\n"}},
  "timeout_seconds": 30
}}
"""
    add(
        "config/inventory.json",
        REDACTED,
        "inventory_json_marker",
        service_json,
        [json_password, json_api_key, json_pk, gocspx],
    )

    # -- TOML ----------------------------------------------------------------------------------
    toml_password = g.password()
    toml_token = g.rand(HEX, 40)
    toml = f"""# Search indexer settings (indexer_toml_marker)
[upstream]
url = "https://search.internal"
password = "{toml_password}"
token = "{toml_token}"
"""
    add("config/indexer.toml", REDACTED, "indexer_toml_marker", toml, [toml_password, toml_token])

    # -- shell (env-style, unquoted), basic-auth URL -------------------------------------------
    sh_aws = g.rand(B64, 40)
    sh_db = g.password()
    clone = g.rand(ALNUM, 24)
    sh = f"""#!/bin/sh
# Release script (release_script_marker)
export AWS_SECRET_ACCESS_KEY={sh_aws}
export DB_PASS={sh_db}
git clone https://deploy:{clone}@git.internal/acme/app.git
echo "released"
"""
    add("scripts/release.sh", REDACTED, "release_script_marker", sh, [sh_aws, sh_db, clone])

    # -- Go, Java, Terraform: language-specific assignment shapes ------------------------------
    go_pw = g.password()
    go_jwt = g.rand(ALNUM, 32)
    go = f"""package main

// gateway_main_marker
const dbPassword = "{go_pw}"

func signingKey() string {{
	jwtSecret := "{go_jwt}"
	return jwtSecret
}}
"""
    add("cmd/gateway/main.go", REDACTED, "gateway_main_marker", go, [go_pw, go_jwt])

    java_key = g.rand(ALNUM, 32)
    java = f"""package com.acme.ledger;

/** ledger_client_marker */
public class LedgerClient {{
    private static final String API_KEY = "{java_key}";

    public String endpoint() {{
        return "https://ledger.internal/v2";
    }}
}}
"""
    add("src/main/java/com/acme/ledger/LedgerClient.java", REDACTED, "ledger_client_marker", java, [java_key])

    tf_pw = g.password()
    tf = f"""# terraform_db_marker
resource "aws_db_instance" "main" {{
  engine   = "postgres"
  username = "app"
  password = "{tf_pw}"
}}
"""
    add("infra/main.tf", REDACTED, "terraform_db_marker", tf, [tf_pw])

    # -- Markdown: a kubeconfig fragment and an EC key in prose -------------------------------
    md_token = g.rand(ALNUM, 40)
    md_key_data = base64.b64encode(("-----BEGIN RSA PRIVATE KEY-----\n" + g.rand(B64, 300)).encode()).decode()
    ec_body = g.pem_body(3)
    md = f"""# Cluster access (cluster_runbook_marker)

Ask the platform team for access. The admin user in our kubeconfig looks like this:

```yaml
users:
- name: admin
  user:
    token: {md_token}
    client-key-data: {md_key_data}
```

The webhook signer uses this key while we migrate to the vault:

```
-----BEGIN EC PRIVATE KEY-----
{chr(10).join(ec_body)}
-----END EC PRIVATE KEY-----
```

Rotate both after every incident, and record the rotation in the runbook log.
Check the audit trail weekly; the on-call engineer owns the rotation.
Keys older than ninety days are revoked automatically by the platform.
Questions go to the platform channel.
"""
    add("docs/cluster-runbook.md", REDACTED, "cluster_runbook_marker", md, [md_token, md_key_data[60:120], *ec_body])

    # -- files that are mostly secrets: skipped whole -----------------------------------------
    kube_token = g.rand("abcdefghijklmnopqrstuvwxyz0123456789", 6) + "." + g.rand(HEX, 16)
    kube_key = base64.b64encode(("-----BEGIN RSA PRIVATE KEY-----\n" + g.rand(B64, 600)).encode()).decode()
    kubeconfig = f"""apiVersion: v1
kind: Config
# kubeconfig_marker
clusters:
- cluster:
    certificate-authority-data: {base64.b64encode(b"ca-cert-placeholder").decode()}
    server: https://k8s.internal:6443
  name: prod
contexts:
- context:
    cluster: prod
    user: admin
  name: prod
current-context: prod
users:
- name: admin
  user:
    token: {kube_token}
    client-key-data: {kube_key}
"""
    add("deploy/prod-cluster.yaml", SECRET_CONTENT, "kubeconfig_marker", kubeconfig, [kube_token, kube_key[60:120]])

    openssh_body = g.pem_body(6, 70)
    deploy_key = (
        "-----BEGIN OPENSSH PRIVATE KEY-----\n"
        + "\n".join(openssh_body)
        + "\n-----END OPENSSH PRIVATE KEY-----\n"
        + "deploy_key_marker\n"
    )
    add("ops/keys/deploy_key.txt", SECRET_CONTENT, "deploy_key_marker", deploy_key, openssh_body)

    # -- secret file names: never read ---------------------------------------------------------
    k8s_secret = g.rand(ALNUM, 24)
    add(
        "config/secret.yaml",
        SECRET_FILE,
        "k8s_secret_marker",
        f"# k8s_secret_marker\napiVersion: v1\nkind: Secret\nstringData:\n  db-password: {k8s_secret}\n",
        [k8s_secret],
    )
    kube_home_token = g.rand(ALNUM, 40)
    add(
        "home/.kube/config",
        SECRET_FILE,
        "kube_home_marker",
        f"# kube_home_marker\nusers:\n- name: me\n  user:\n    token: {kube_home_token}\n",
        [kube_home_token],
    )
    files.extend(_issue51_files(_Gen(51)))
    return Corpus(files)


def _issue51_files(g: _Gen) -> list[PlantedFile]:
    """Issue 51, attack 3: credentials in command lines, headers, connection strings, struct and
    property assignments, XML config and `.netrc` lines, and provider tokens the first rules
    missed (Hugging Face, Vault, Discord webhooks), each in the file it would be found in."""
    out: list[PlantedFile] = []

    def add(path: str, marker: str, body: str, secrets: list[str]) -> None:
        assert all(s in body for s in secrets), path
        out.append(PlantedFile(path, body, REDACTED, marker, secrets))

    wp_password = g.password()
    wp_salt = g.rand(ALNUM + "!#%&*+-.:;<>?@^_|~", 64)
    add(
        "wordpress/wp-config.php",
        "wordpress_config_marker",
        f"""<?php
/** The base configuration for WordPress (wordpress_config_marker) */
define( 'DB_NAME', 'shop' );
define( 'DB_USER', 'shop' );
define( 'DB_PASSWORD', '{wp_password}' );
define( 'DB_HOST', 'db.internal' );
define( 'DB_CHARSET', 'utf8mb4' );
define( 'AUTH_KEY', '{wp_salt}' );
$table_prefix = 'wp_';
define( 'WP_DEBUG', false );
if ( ! defined( 'ABSPATH' ) ) {{
\tdefine( 'ABSPATH', __DIR__ . '/' );
}}
require_once ABSPATH . 'wp-settings.php';
""",
        [wp_password, wp_salt],
    )

    mvn_password = g.password()
    add(
        "deploy/maven/settings.xml",
        "maven_settings_marker",
        f"""<settings>
  <!-- maven_settings_marker: where releases are deployed -->
  <localRepository>/var/cache/maven</localRepository>
  <servers>
    <server>
      <id>releases</id>
      <username>deploy</username>
      <password>{mvn_password}</password>
    </server>
  </servers>
  <mirrors>
    <mirror><id>central-proxy</id><url>https://repo.internal/maven2</url><mirrorOf>central</mirrorOf></mirror>
  </mirrors>
</settings>
""",
        [mvn_password],
    )

    dotnet_key = g.rand(ALNUM, 24)
    dotnet_smtp = g.password()
    add(
        "src/Legacy/appSettings.xml",
        "dotnet_app_settings_marker",
        f"""<?xml version="1.0" encoding="utf-8"?>
<!-- dotnet_app_settings_marker: settings of the legacy order site -->
<appSettings>
  <add key="SiteName" value="Orders" />
  <add key="PageSize" value="50" />
  <add key="PaymentsApiKey" value="{dotnet_key}" />
  <add key="SmtpHost" value="smtp.internal" />
  <add key="SmtpPassword" value="{dotnet_smtp}" />
  <add key="CacheMinutes" value="15" />
</appSettings>
""",
        [dotnet_key, dotnet_smtp],
    )

    mysql_pw = g.password()
    curl_pw = g.password()
    sshpass_pw = g.password()
    docker_pw = g.password()
    netrc_pw = g.password()
    add(
        "ops/backup.sh",
        "nightly_backup_marker",
        f"""#!/bin/bash
# nightly_backup_marker: dump the shop database and ship it to the archive host
set -euo pipefail
STAMP=$(date +%Y%m%d)
OUT=/var/backups/shop-$STAMP.sql.gz
mysqldump -u root -p{mysql_pw} --single-transaction shop | gzip > "$OUT"
curl -u backup:{curl_pw} -T "$OUT" https://archive.internal/upload/
sshpass -p '{sshpass_pw}' scp "$OUT" backup@archive.internal:/srv/backups/
docker login -u ci -p {docker_pw} registry.internal
cat > "$HOME/.netrc" <<NETRC
machine archive.internal login backup password {netrc_pw}
NETRC
find /var/backups -name 'shop-*.sql.gz' -mtime +14 -delete
echo "backup written to $OUT"
logger -t backup "nightly backup done"
du -sh /var/backups
ls -1 /var/backups | tail -n 3
sync
exit 0
""",
        [mysql_pw, curl_pw, sshpass_pw, docker_pw, netrc_pw],
    )

    basic = base64.b64encode(f"reports:{g.password()}".encode()).decode()
    api_key = g.rand(ALNUM, 20)
    dsn_pw = g.password()
    add(
        "reports/http_client.py",
        "reports_http_client_marker",
        f'''"""HTTP and database clients of the reports job (reports_http_client_marker)."""

import psycopg
import requests

REPORTS_URL = "https://reports.internal/api/v1"
ARCHIVE_HEADERS = {{"Authorization": "Basic {basic}", "Accept": "application/json"}}
headers = {{"X-Api-Key": "{api_key}"}}
DSN = "host=db.internal user=reports password={dsn_pw} dbname=reports"


def fetch_report(report_id: str) -> dict:
    """Download one report as JSON."""
    response = requests.get(f"{{REPORTS_URL}}/reports/{{report_id}}", headers=headers, timeout=30)
    response.raise_for_status()
    return response.json()


def connect():
    return psycopg.connect(DSN)
''',
        [basic, api_key, dsn_pw],
    )

    gh_token = g.rand(HEX, 40)
    add(
        "web/src/github.js",
        "github_client_marker",
        f"""// github_client_marker: list the issues of the shop repository
const API = "https://api.github.com";

export async function listIssues(repo) {{
  const res = await fetch(`${{API}}/repos/${{repo}}/issues`, {{
    headers: {{ Authorization: 'token {gh_token}', Accept: "application/vnd.github+json" }},
  }});
  if (!res.ok) throw new Error(`GitHub answered ${{res.status}}`);
  return res.json();
}}
""",
        [gh_token],
    )

    go_pw = g.password()
    add(
        "internal/store/config.go",
        "store_config_marker",
        f"""package store

// store_config_marker: how the order store reaches its database.
type Config struct {{
\tHost     string
\tUser     string
\tPassword string
\tPoolSize int
}}

var Default = Config{{
\tHost:     "db.internal",
\tUser:     "orders",
\tPassword: "{go_pw}",
\tPoolSize: 20,
}}
""",
        [go_pw],
    )

    java_pw = g.password()
    add(
        "src/main/java/com/acme/orders/DataSources.java",
        "orders_datasource_marker",
        f"""package com.acme.orders;

import java.util.Properties;

/** orders_datasource_marker: the JDBC properties of the order database. */
public final class DataSources {{
    public static Properties orders() {{
        Properties props = new Properties();
        props.setProperty("user", "orders");
        props.setProperty("password", "{java_pw}");
        props.setProperty("ssl", "true");
        props.setProperty("connectTimeout", "10");
        return props;
    }}
}}
""",
        [java_pw],
    )

    hf = g.rand(string.ascii_letters, 34)
    hf_org = g.rand(string.ascii_letters, 34)
    vault_new = g.rand(URLSAFE, 95)
    vault_old = g.rand(ALNUM, 24)
    discord = g.rand(string.digits, 19) + "/" + g.rand(URLSAFE, 68)
    add(
        "ml/hub_upload.py",
        "model_upload_marker",
        f'''"""Upload the ranking model to the hub and notify the team (model_upload_marker)."""

from huggingface_hub import HfApi
import hvac
import requests

HF_TOKEN = "hf_{hf}"
hub = HfApi(token="api_org_{hf_org}")
vault = hvac.Client(url="https://vault.internal:8200", token="hvs.{vault_new}")
legacy_vault = hvac.Client(url="https://vault-old.internal:8200", token="hvs.{vault_old}")
WEBHOOK = "https://discord.com/api/webhooks/{discord}"


def upload(path: str, repo: str) -> None:
    """Push the model file, then post a note to the team channel."""
    hub.upload_file(path_or_fileobj=path, path_in_repo="model.onnx", repo_id=repo)
    requests.post(WEBHOOK, json={{"content": f"uploaded {{repo}}"}}, timeout=10)
''',
        [hf, hf_org, vault_new, vault_old, discord],
    )
    return out


# Ordinary code that mentions secrets without holding one: what a scanner must leave alone.
ORDINARY = [
    ("app/auth.py", "def check_password(user, password):\n    return hasher.verify(user.password_hash, password)\n"),
    ("app/tokens.py", "token_type = 'bearer'\nTOKEN_URL = 'https://auth.example.com/oauth/token'\n"),
    ("app/keys.py", "cache_key = f'user:{user_id}'\nkey = settings.SECRET_KEY_NAME\n"),
    ("app/env.py", "password = os.environ['DB_PASSWORD']\nsecret = get_secret('billing')\n"),
    ("deploy/app.yaml", "password: ${DB_PASSWORD}\napiKey: '{{ .Values.apiKey }}'\n"),
    ("docs/auth.md", "The password: must be at least 12 characters and is never logged.\n"),
    ("app/parse.py", "for token in tokens:\n    if token.kind == 'KEY':\n        yield token\n"),
    ("app/hashes.py", "EXPECTED_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'\n"),
]
