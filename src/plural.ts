// Apart from present.ts, whose commander and chalk a run line must not load: a turn counts too.

/** "1 branch", "2 branches". */
export const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;
