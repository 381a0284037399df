import type { FastifyInstance } from 'fastify';
import type { Settings } from '../config.js';
import type { Services } from '../services/index.js';
import type { SignInWait } from '../services/limits.js';
import { firstStaffCommand } from '../services/users.js';
import { waitingApplication } from './authorize.js';
import { html } from './html.js';
import { page } from './layout.js';
import { textField } from './context.js';
import { checkCsrf, endSignedIn, loadSession, safeNext, startSignedIn } from './session.js';

/** The posted form as sent: any field may be missing, repeated or (as JSON) of any type. */
interface SignInForm {
  email?: unknown;
  password?: unknown;
  next?: unknown;
  _csrf?: unknown;
}

/**
 * The sign-in page; `waiting` names the application whose connection brought the user here, so
 * that they know why they are asked to sign in.
 */
function signInPage(csrfToken: string, next: string, allowSignup: boolean, email = '', problem = '', waiting?: string, noUsers = false): string {
  return page({
    title: 'Sign in',
    body: html`<section class="card narrow">
  <h1>Sign in to Anchorage</h1>
  ${
    noUsers
      ? html`<div class="notice notice-info" role="status" data-first-user><p>Nobody can sign in yet: this service has no users. Create the first staff user on the server, then sign in with it:</p><pre class="code-block"><code>${firstStaffCommand}</code></pre><p>Staff then create customer accounts under Accounts.</p></div>`
      : ''
  }
  ${
    waiting
      ? html`<p class="notice notice-info" data-waiting-app><strong>${waiting}</strong> wants to connect to your Anchorage account. Sign in to continue; you then choose whether to allow it.</p>`
      : ''
  }
  ${problem ? html`<p class="error" role="alert">${problem}</p>` : ''}
  <form method="post" action="/app/sign-in" class="stack">
    <input type="hidden" name="_csrf" value="${csrfToken}">
    <input type="hidden" name="next" value="${next}">
    <label>E-mail <input type="email" name="email" value="${email}" autocomplete="username" required autofocus></label>
    <label>Password <input type="password" name="password" autocomplete="current-password" required></label>
    <button type="submit" class="primary">Sign in</button>
  </form>
  ${allowSignup ? html`<p class="muted">New to Anchorage? <a href="/app/sign-up">Create an account</a></p>` : ''}
</section>`,
  }).value;
}

const lockReasons: Record<SignInWait['rule'], string> = {
  pair: 'Too many failed sign-ins for this e-mail address from your network.',
  email: 'Too many failed sign-ins for this e-mail address.',
  address: 'Too many failed sign-ins from your network.',
};

/** "1 minute", "15 minutes": a rule's lock as the documentation states it. */
const lockLength = (seconds: number): string => (seconds === 60 ? '1 minute' : `${Math.round(seconds / 60)} minutes`);

/** The 429 page's message: why, the rule's lock, and the real wait (the same number as Retry-After). */
function lockMessage(wait: SignInWait): string {
  const minutes = Math.ceil(wait.seconds / 60);
  const when = wait.seconds < 120 ? `${wait.seconds} seconds` : `${minutes} minutes`;
  return `${lockReasons[wait.rule]} Sign-in is locked for ${lockLength(wait.lock)}; try again in ${when}.`;
}

/** Sign-in and sign-out, shared by the UI and the MCP connection flow. */
export async function signInRoutes(app: FastifyInstance, options: { services: Services; settings: Settings }) {
  const { services } = options;
  const secure = options.settings.publicUrl.startsWith('https://');

  app.get<{ Querystring: { next?: string } }>('/app/sign-in', async (request, reply) => {
    const session = await loadSession(request, reply, services, secure);
    const next = safeNext(request.query.next, options.settings.publicUrl);
    if (session.user) return reply.redirect(next);
    const waiting = await waitingApplication(services, options.settings, next);
    return reply.type('text/html').send(signInPage(session.csrfToken, next, options.settings.allowSignup, '', '', waiting, !(await services.users.any())));
  });

  app.post<{ Body: SignInForm | null | undefined }>('/app/sign-in', async (request, reply) => {
    const session = await loadSession(request, reply, services, secure);
    const form = request.body ?? {};
    checkCsrf(session, form._csrf);
    const email = textField(form.email).trim();
    const next = safeNext(form.next, options.settings.publicUrl);
    const wait = await services.signInThrottle.wait(email, request.ip);
    if (wait) {
      return reply
        .code(429)
        .header('retry-after', wait.seconds)
        .type('text/html')
        .send(signInPage(session.csrfToken, next, options.settings.allowSignup, email, lockMessage(wait), await waitingApplication(services, options.settings, next)));
    }
    const user = await services.users.verifyPassword(email, textField(form.password));
    if (!user) {
      await services.signInThrottle.failed(email, request.ip);
      return reply
        .code(401)
        .type('text/html')
        .send(signInPage(session.csrfToken, next, options.settings.allowSignup, email, 'That e-mail and password do not match an account.', await waitingApplication(services, options.settings, next)));
    }
    await services.signInThrottle.succeeded(email, request.ip);
    startSignedIn(reply, await services.sessions.signIn(session.id, user.id), secure);
    return reply.redirect(next, 303);
  });

  app.post<{ Body: SignInForm | null | undefined }>('/app/sign-out', async (request, reply) => {
    const session = await loadSession(request, reply, services, secure);
    checkCsrf(session, request.body?._csrf);
    if (session.id) await services.sessions.end(session.id);
    endSignedIn(reply, secure);
    return reply.redirect('/app/sign-in', 303);
  });
}
