/** The shapes of a PATCH replacement and of what a failed one tells the client (`near-match.ts`). */

export interface Replacement {
  find: string;
  replace?: string;
  all?: boolean;
}

export interface ReplacementFailure {
  index: number;
  matches: number;
}

/** A passage of the body that a failed `find` probably meant. */
export interface NearMatch {
  /** Code-point offset of the passage in the body the replacement ran on. */
  offset: number;
  /** Its length in code points (at most `MAX_NEAR_MATCH_LENGTH`). */
  length: number;
  /** The body's exact text there: usable as `find` as it is. */
  text: string;
  /** True when it is the find itself but for case, white space or entity spelling. */
  equivalent: boolean;
}

/** One occurrence of a `find` that matched more than once. */
export interface Occurrence {
  offset: number;
  /** Up to `CONTEXT_LENGTH` code points of the body before and after the occurrence. */
  before: string;
  after: string;
}

export interface ExplainedFailure extends ReplacementFailure {
  near_match?: NearMatch;
  occurrences?: Occurrence[];
}
