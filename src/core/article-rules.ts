import { validationFailed } from './errors.js';

/**
 * An article's title holds something to read: empty or white space only, it is refused on every
 * channel (PUT and PATCH, MCP, the UI editor, import). Stored as given: the rule refuses, it never trims.
 */
export const blankTitle = 'Must not be empty or only white space.';

export const isBlankTitle = (title: string): boolean => title.trim() === '';

/** Refuses a blank title as a 422 `validation_failed` naming `title`; an absent one changes nothing. */
export function checkTitle(title: string | null | undefined): void {
  if (typeof title === 'string' && isBlankTitle(title)) throw validationFailed({ title: [blankTitle] });
}
