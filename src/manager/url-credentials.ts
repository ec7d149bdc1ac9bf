// A URL's `user:password@` must not reach a log line or an error message: every place that
// refuses or shows a URL the operator wrote masks it with this.

/** `text` with whatever sits between `//` and `@` in the authority replaced by `***`. */
export function maskUrlCredentials(text: string): string {
  return text.replace(/\/\/[^/?#]*@/, '//***@');
}
