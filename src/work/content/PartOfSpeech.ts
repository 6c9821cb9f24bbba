import { createRequire } from "node:module"
import type Tagger from "wink-pos-tagger"

/**
 * Part-of-speech tags (Penn Treebank) from wink-pos-tagger, so that the
 * spintax converter swaps a word only where its synonym fits: "before" in
 * "shop now before your size sells out" is a preposition (IN), not the
 * adverb WordNet pairs with "earlier". The tagger's lexicon takes ~0.4 s to
 * load, so it loads on the first conversion (on a content worker thread).
 */

const require = createRequire(import.meta.url)
let tagger: Tagger | undefined
let lexicon: Readonly<Record<string, ReadonlyArray<string> | undefined>> | undefined

const load = (): Tagger => {
  if (tagger === undefined) tagger = (require("wink-pos-tagger") as () => Tagger)()
  return tagger
}

/**
 * Every tag the tagger's lexicon (the one it tags with) allows for a word, or
 * `undefined` for a word it does not list: a word whose every tag fits needs no
 * tagging in context, which spares most of the tagging work.
 */
export const lexiconTags = (word: string): ReadonlyArray<string> | undefined => {
  lexicon ??= require("wink-lexicon/src/lexicon.js") as Record<string, ReadonlyArray<string> | undefined>
  return Object.hasOwn(lexicon, word.toLowerCase()) ? lexicon[word.toLowerCase()] : undefined
}

/** One tag per word, in order; a word without letters or digits is tagged as punctuation. */
export const partOfSpeechTags = (words: ReadonlyArray<string>): ReadonlyArray<string> => {
  const tokens = words.map((word) => (/[\p{L}\p{N}]/u.test(word) ? word : ","))
  return load().tagRawTokens(tokens).map((token) => token.pos)
}
