// The HTML of the login and consent page (semantics I60–I66): plain forms without JavaScript, every
// value escaped, a heading, labels and a visible error. The password is never written back.

import { escapeHtml } from "../../reports/index.js";

const STYLE = `
body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f3f4f6;color:#111827}
main{max-width:26rem;margin:3rem auto;padding:2rem;background:#fff;border:1px solid #d1d5db;border-radius:.5rem}
h1{font-size:1.4rem;margin:0 0 1rem}
label{display:block;margin:1rem 0 .25rem;font-weight:600}
input[type=email],input[type=password]{box-sizing:border-box;width:100%;padding:.5rem;font:inherit;border:1px solid #6b7280;border-radius:.25rem}
button{font:inherit;padding:.5rem 1.25rem;margin:1.25rem .5rem 0 0;border-radius:.25rem;border:1px solid #1d4ed8;cursor:pointer}
.primary{background:#1d4ed8;color:#fff}.secondary{background:#fff;color:#1d4ed8}
.error{color:#991b1b;background:#fef2f2;border:1px solid #fca5a5;padding:.5rem .75rem;border-radius:.25rem}
.small{color:#4b5563;font-size:.9rem}`;

/** A whole page: `title` (plain text) in the title and the heading, `body` HTML already escaped. */
function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>${escapeHtml(title)}</h1>
${body}
</main>
</body>
</html>
`;
}

function hidden(fields: Readonly<Record<string, string>>): string {
  return Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join("\n");
}

function errorBlock(error: string | null): string {
  return error === null ? "" : `<p class="error" id="error" role="alert">${escapeHtml(error)}</p>\n`;
}

/** What the application asks, in words: a refresh token is "keep you signed in" (I64). */
export function askSentence(appName: string, offline: boolean): string {
  return `${appName} asks to sign you in${offline ? " and keep you signed in" : ""}.`;
}

/** What the login form shows. */
export interface LoginView {
  readonly action: string;
  readonly appName: string;
  readonly offline: boolean;
  /** The email typed before (shown again after a failed login), or empty. */
  readonly email: string;
  readonly error: string | null;
  readonly txn: string;
  readonly csrf: string;
}

/** The login form: email and password, posted with the transaction and the CSRF field (I61, I62). */
export function loginHtml(v: LoginView): string {
  const described = v.error === null ? "" : ' aria-describedby="error"';
  return page(
    `Sign in to ${v.appName}`,
    `<p>${escapeHtml(askSentence(v.appName, v.offline))}</p>
${errorBlock(v.error)}<form method="post" action="${escapeHtml(v.action)}">
${hidden({ step: "login", txn: v.txn, csrf: v.csrf })}
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(v.email)}"${described}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required${described}>
<button type="submit" class="primary">Sign in</button>
</form>`,
  );
}

/** What the consent form shows. */
export interface ConsentView {
  readonly action: string;
  readonly appName: string;
  readonly offline: boolean;
  readonly userEmail: string;
  /** Where the answer goes: the redirect URI's origin. */
  readonly destination: string;
  readonly txn: string;
  readonly csrf: string;
  readonly login: string;
}

/** The consent form: Allow or Deny, carrying the login proof (I63, I64). */
export function consentHtml(v: ConsentView): string {
  return page(
    `Allow ${v.appName}?`,
    `<p>${escapeHtml(askSentence(v.appName, v.offline))}</p>
<p class="small">Signed in as <strong>${escapeHtml(v.userEmail)}</strong>. Your answer is sent to ${escapeHtml(v.destination)}.</p>
<form method="post" action="${escapeHtml(v.action)}">
${hidden({ step: "consent", txn: v.txn, csrf: v.csrf, login: v.login })}
<button type="submit" name="decision" value="allow" class="primary">Allow</button>
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</form>`,
  );
}

/** A page that only explains a refusal (no form). */
export function messageHtml(title: string, message: string): string {
  return page(title, `<p class="error" role="alert">${escapeHtml(message)}</p>`);
}
