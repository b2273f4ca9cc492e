// A list of every value of a union type the API declares (its languages, its label colours): the
// server holds the runtime list, the app only the type, so the app writes the values out again and
// this makes the type check fail, naming what is missing, when the API adds one.

type Missing<T, L extends readonly unknown[]> = [Exclude<T, L[number]>] extends [never]
  ? unknown
  : { missing: Exclude<T, L[number]> };

/** `every<Color>()(['red', …])`: the list as given, if it names every member of the union. */
export const every =
  <T>() =>
  <const L extends readonly T[]>(list: L & Missing<T, L>): L =>
    list;
