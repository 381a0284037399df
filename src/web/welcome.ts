import type { FastifyInstance } from 'fastify';
import { AppError } from '../core/errors.js';
import { minPasswordLength } from '../services/users.js';
import { csrfField, notice } from './components.js';
import { secureCookies, textField, type WebOptions } from './context.js';
import { html } from './html.js';
import { page } from './layout.js';
import { checkCsrf, loadSession, startSignedIn } from './session.js';

const spent = {
  used: 'This link has been used already: it works once. Sign in with your password, or ask your Anchorage contact for a new link.',
  expired: 'This link has expired. Ask your Anchorage contact for a new one.',
};

function welcomePage(csrfToken: string, token: string, email: string, problem = ''): string {
  return page({
    title: 'Choose your password',
    body: html`<section class="card narrow">
  <h1>Welcome to Anchorage</h1>
  <p>Choose the password for <strong>${email}</strong>. You are signed in as soon as it is saved.</p>
  ${problem ? notice('error', problem) : ''}
  <form method="post" action="/app/welcome/${token}" class="stack">
    ${csrfField(csrfToken)}
    <input type="text" name="username" value="${email}" autocomplete="username" hidden>
    <label for="wp-password">Password <span class="muted small">(at least ${minPasswordLength} characters)</span></label>
    <input id="wp-password" name="password" type="password" minlength="${minPasswordLength}" autocomplete="new-password" required autofocus>
    <button type="submit" class="primary">Save password and sign in</button>
  </form>
</section>`,
  }).value;
}

/**
 * The page a password link opens (`OnboardingService`): the user a staff member created chooses a
 * password, once, and is signed in. The token stays out of the activity log and every redirect.
 */
export async function welcomeRoutes(app: FastifyInstance, options: WebOptions) {
  const { services, settings } = options;
  const secure = secureCookies(settings);
  const unknown = () => new AppError('not_found', 'This link is not valid. Check that you copied all of it, or ask your Anchorage contact for a new one.');

  app.get<{ Params: { token: string } }>('/app/welcome/:token', async (request, reply) => {
    const opened = await services.onboarding.openLink(request.params.token);
    if (!opened) throw unknown();
    if (opened.state !== 'open') throw new AppError('not_found', spent[opened.state]);
    const session = await loadSession(request, reply, services, secure);
    return reply.type('text/html; charset=utf-8').header('cache-control', 'no-store').send(welcomePage(session.csrfToken, request.params.token, opened.email));
  });

  app.post<{ Params: { token: string }; Body: { password?: unknown; _csrf?: unknown } | undefined }>('/app/welcome/:token', async (request, reply) => {
    const session = await loadSession(request, reply, services, secure);
    checkCsrf(session, request.body?._csrf);
    const { token } = request.params;
    const opened = await services.onboarding.openLink(token);
    if (!opened) throw unknown();
    if (opened.state !== 'open') throw new AppError('not_found', spent[opened.state]);
    let result;
    try {
      result = await services.onboarding.setPassword(token, textField(request.body?.password));
    } catch (error) {
      if (!(error instanceof AppError) || error.code !== 'validation_failed') throw error;
      const problem = error.details.fields?.password?.join(' ') ?? error.message;
      return reply.code(422).type('text/html; charset=utf-8').header('cache-control', 'no-store').send(welcomePage(session.csrfToken, token, opened.email, problem));
    }
    if (!result) throw unknown();
    if ('state' in result) throw new AppError('not_found', spent[result.state]);
    startSignedIn(reply, await services.sessions.signIn(session.id, result.userId), secure);
    return reply.redirect('/app', 303);
  });
}
