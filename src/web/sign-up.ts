import type { FastifyInstance } from 'fastify';
import { AppError } from '../core/errors.js';
import { accountNameProblem, emailProblem, minPasswordLength, passwordProblem, UserExistsError } from '../services/users.js';
import { notice } from './components.js';
import { secureCookies, textField, type WebOptions } from './context.js';
import { html } from './html.js';
import { page } from './layout.js';
import { checkCsrf, loadSession, startSignedIn } from './session.js';

interface SignUpForm {
  email?: unknown;
  password?: unknown;
  account?: unknown;
  _csrf?: unknown;
}

function signUpPage(csrfToken: string, values: { email: string; account: string }, problem = ''): string {
  return page({
    title: 'Create an account',
    body: html`<section class="card narrow">
  <h1>Create your Anchorage account</h1>
  ${problem ? notice('error', problem) : ''}
  <form method="post" action="/app/sign-up" class="stack">
    <input type="hidden" name="_csrf" value="${csrfToken}">
    <label for="su-account">Company or account name</label>
    <input id="su-account" name="account" type="text" maxlength="200" value="${values.account}" autocomplete="organization">
    <label for="su-email">E-mail</label>
    <input id="su-email" name="email" type="email" maxlength="254" value="${values.email}" autocomplete="username" required>
    <label for="su-password">Password <span class="muted small">(at least ${minPasswordLength} characters)</span></label>
    <input id="su-password" name="password" type="password" minlength="${minPasswordLength}" autocomplete="new-password" required>
    <button type="submit" class="primary">Create account</button>
  </form>
  <p class="muted small">Already have an account? <a href="/app/sign-in">Sign in</a>.</p>
</section>`,
  }).value;
}

/** Self-service sign-up, only where the deployment allows it (ALLOW_SIGNUP=true). */
export async function signUpRoutes(app: FastifyInstance, options: WebOptions) {
  const { services, settings } = options;
  const secure = secureCookies(settings);
  const closed = () => new AppError('not_found', 'Sign-up is not open on this service; ask your Anchorage contact for an account.');

  app.get('/app/sign-up', async (request, reply) => {
    if (!settings.allowSignup) throw closed();
    const session = await loadSession(request, reply, services, secure);
    if (session.user) return reply.redirect('/app');
    return reply.type('text/html; charset=utf-8').send(signUpPage(session.csrfToken, { email: '', account: '' }));
  });

  app.post<{ Body: SignUpForm }>('/app/sign-up', async (request, reply) => {
    if (!settings.allowSignup) throw closed();
    const session = await loadSession(request, reply, services, secure);
    checkCsrf(session, request.body?._csrf);
    const values = { email: textField(request.body?.email).trim(), account: textField(request.body?.account).trim() };
    const password = textField(request.body?.password);
    const refuse = (problem: string) =>
      reply.code(422).type('text/html; charset=utf-8').send(signUpPage(session.csrfToken, values, problem));
    const problem = emailProblem(values.email) ?? passwordProblem(password) ?? accountNameProblem(values.account);
    if (problem) return refuse(problem);
    let created: { user_id: number };
    try {
      created = await services.users.create({ email: values.email, password, account: values.account || undefined });
    } catch (error) {
      if (error instanceof UserExistsError) return refuse('An account with this e-mail exists already. Sign in instead.');
      throw error;
    }
    startSignedIn(reply, await services.sessions.signIn(session.id, created.user_id), secure);
    return reply.redirect('/app', 303);
  });
}
