/**
 * An environment variable as every part of cursor-resume reads it: blanks around
 * the value are dropped, and a blank value counts as unset (undefined).
 */
export function envValue(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === '' ? undefined : trimmed;
}
