import { createRequire } from "node:module"
import type Tagger from "wink-pos-tagger"

/**
 * Part-of-speech tags (Penn Treebank) from wink-pos-tagger, so that the
 * spintax converter swaps a word only where its synonym fits: "before" in
 * "shop now before your size sells out" is a preposition (IN), not the
 * adverb WordNet pairs with "earlier". The tagger's lexicon takes ~0.4 s to
 * load, so it loads on the first conversion (on a content worker thread).
 */

let tagger: Tagger | undefined

const load = (): Tagger => {
  if (tagger === undefined) {
    const create = createRequire(import.meta.url)("wink-pos-tagger") as () => Tagger
    tagger = create()
  }
  return tagger
}

/** One tag per word, in order; a word without letters or digits is tagged as punctuation. */
export const partOfSpeechTags = (words: ReadonlyArray<string>): ReadonlyArray<string> => {
  const tokens = words.map((word) => (/[\p{L}\p{N}]/u.test(word) ? word : ","))
  return load().tagRawTokens(tokens).map((token) => token.pos)
}
