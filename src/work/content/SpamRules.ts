import { Result } from "effect"
import abusedTlds from "./data/abused-tlds.json" with { type: "json" }
import shortenerHosts from "./data/url-shorteners.json" with { type: "json" }
import { type EmailMarkup, hostOf, type Link, mismatchedHosts, readEmail } from "./EmailMarkup.ts"
import { countVariants, mergeFieldNames, parse, type Template } from "./Spintax.ts"
import { findTriggerPhrases, findTriggerPhrasesIn, type Severity, type TriggerPhrase } from "./TriggerPhrases.ts"
import { hasSubject, type MetricName, plural, quoted, scoreMetrics, type SpamAnalysis, type WeighedMetric } from "./SpamScore.ts"
import { type Chunk, chunksOf } from "./Words.ts"

/**
 * The deterministic spam analysis: eight metrics, each scored 0–100 from
 * documented penalties (docs/content.md), combined by `SpamScore`. Every
 * rule is a single pass or a bounded regular expression over the text.
 */


/** Gmail clips a message whose HTML is over about 102 KB. */
export const gmailClipBytes = 102 * 1024

const severityPoints: Record<Severity, number> = { high: 15, medium: 8, low: 4 }
const subjectSeverityPoints: Record<Severity, number> = { high: 25, medium: 15, low: 8 }

const shorteners: ReadonlySet<string> = new Set(shortenerHosts)
/** Top-level domains that abuse reports (Spamhaus, Interisle) find mostly used for spam and phishing. */
const abusedTopLevel: ReadonlySet<string> = new Set(abusedTlds)

/** Accumulates a metric's penalties with their reasons. */
const scorer = (name: MetricName) => {
  let score = 100
  const issues: Array<string> = []
  const suggestions: Array<string> = []
  return {
    penalise: (points: number, issue: string, suggestion?: string) => {
      score -= points
      issues.push(issue)
      if (suggestion !== undefined && !suggestions.includes(suggestion)) suggestions.push(suggestion)
    },
    done: (description: string): WeighedMetric => ({
      name,
      score: Math.max(0, Math.min(100, Math.round(score))),
      description,
      issues,
      suggestions
    })
  }
}


/** Text as one variant reads (first option of each group, merge fields by their fallback), and every option's text. */
interface Readings {
  readonly sample: string
  readonly everyOption: string
  readonly template: Template | undefined
  readonly syntaxError: string | undefined
}

const readingsOf = (text: string): Readings => {
  const parsed = parse(text)
  if (Result.isFailure(parsed)) return { sample: text, everyOption: text, template: undefined, syntaxError: parsed.failure.message }
  const sample: Array<string> = []
  const every: Array<string> = []
  const visit = (nodes: Template, into: Array<string>, firstOnly: boolean): void => {
    for (const node of nodes) {
      if (node._tag === "Text") into.push(node.text)
      else if (node._tag === "MergeField") into.push(node.fallback ?? "")
      else if (firstOnly) visit(node.options[0] ?? [], into, true)
      else node.options.forEach((option) => {
        into.push("\n")
        visit(option, into, false)
        into.push("\n")
      })
    }
  }
  visit(parsed.success, sample, true)
  visit(parsed.success, every, false)
  return { sample: sample.join(""), everyOption: every.join(""), template: parsed.success, syntaxError: undefined }
}

const wordsIn = (chunks: ReadonlyArray<Chunk>) => chunks.filter((chunk) => /[\p{L}\p{N}]/u.test(chunk.core)).length
/** Counts the characters of a class, deciding ASCII by code (the hot path) and the rest by Unicode property. */
const counter = (ascii: (code: number) => boolean, unicode: RegExp) => (text: string) => {
  let count = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 128 ? ascii(code) : unicode.test(text[i]!)) count += 1
  }
  return count
}
const isAsciiCapital = (code: number) => code >= 65 && code <= 90
const lettersIn = counter((code) => isAsciiCapital(code) || (code >= 97 && code <= 122), /\p{L}/u)
const capitalsIn = counter(isAsciiCapital, /\p{Lu}/u)
const shoutedWords = (chunks: ReadonlyArray<Chunk>) =>
  chunks.filter((chunk) => !chunk.isProtected && chunk.core.length >= 4 && /^[\p{Lu}\p{N}'-]+$/u.test(chunk.core) && /\p{Lu}{4}/u.test(chunk.core))
    .map((chunk) => chunk.core)
const emojiIn = (text: string) => text.match(/\p{Extended_Pictographic}/gu)?.length ?? 0

const subjectMetric = (subject: string | undefined): WeighedMetric => {
  const metric = scorer("Subject line")
  if (subject === undefined || subject.trim().length === 0) return metric.done("No subject given: not scored and not weighed.")
  const text = readingsOf(subject).sample.trim()
  if (text.length < 10) metric.penalise(20, `Very short subject (${text.length} characters)`, "Write a specific subject of 20–60 characters.")
  if (text.length > 100) metric.penalise(25, `Very long subject (${text.length} characters)`, "Keep the subject under 60 characters; clients cut it.")
  else if (text.length > 60) metric.penalise(10, `Long subject (${text.length} characters)`, "Keep the subject under 60 characters; clients cut it.")
  const letters = lettersIn(text)
  if (letters >= 8 && capitalsIn(text) / letters > 0.5) metric.penalise(30, "Subject mostly in capitals", "Write the subject in sentence case.")
  else {
    const shouted = shoutedWords(chunksOf(text))
    if (shouted.length > 0) metric.penalise(Math.min(30, 10 * shouted.length), `Words in capitals: ${shouted.join(", ")}`, "Write the subject in sentence case.")
  }
  const exclamations = text.split("!").length - 1
  if (exclamations > 0) metric.penalise(exclamations > 1 ? 25 : 10, `${plural(exclamations, "exclamation mark")} in the subject`, "Drop the exclamation marks from the subject.")
  if (text.split("?").length - 1 > 1) metric.penalise(10, "Several question marks in the subject", "Ask at most one question.")
  if (/[$€£]/.test(text)) metric.penalise(10, "Currency symbol in the subject", "Leave prices out of the subject.")
  if (emojiIn(text) > 1) metric.penalise(10, `${emojiIn(text)} emoji in the subject`, "Use at most one emoji, or none.")
  if (/^\s*(?:re|fwd?)\s*:/i.test(text)) metric.penalise(15, "Subject starts with Re:/Fwd: (reads as a fake reply unless it is one)", "Only use Re:/Fwd: on real replies and forwards.")
  const phrases = findTriggerPhrases(text)
  if (phrases.length > 0) {
    metric.penalise(
      Math.min(60, phrases.reduce((sum, phrase) => sum + subjectSeverityPoints[phrase.severity], 0)),
      `Trigger phrases in the subject: ${phrases.map((phrase) => quoted(phrase.phrase)).join(", ")}`,
      "Reword the subject without sales or urgency phrases."
    )
  }
  return metric.done("Length, capitals, punctuation, symbols and trigger phrases of the subject line.")
}

const phraseSuggestion = (phrase: TriggerPhrase) =>
  phrase.replacement.length > 0
    ? `Replace ${quoted(phrase.phrase)} with ${quoted(phrase.replacement)}.`
    : `Remove ${quoted(phrase.phrase)}.`

/** A sum of money of a million or more, or written with two thousands separators ($1,000,000; 12.500.000 EUR). */
const largeSum = /(?:[$€£]\s?\d{1,3}(?:[,.]\d{3}){2,}|\d{1,3}(?:[,.]\d{3}){2,}(?:[.,]\d{2})?\s?(?:usd|eur|gbp|dollars|euros|pounds)\b|\b\d+(?:[.,]\d+)?\s?(?:million|billion)\b)/i
/** A Bitcoin (legacy or bech32) or Ethereum address: payment that cannot be traced or reversed. */
const walletAddress = /\b(?:bc1[ac-hj-np-z02-9]{25,87}|[13][a-km-zA-HJ-NP-Z1-9]{25,34}|0x[a-fA-F0-9]{40})\b/

/** Lines of at most this length are searched for sums and wallet addresses (longer ones are no such thing). */
const maxPatternLine = 2_000

const someLine = (text: string, pattern: RegExp) =>
  text.split("\n").some((line) => line.length <= maxPatternLine && pattern.test(line))

const triggerMetric = (text: string, body: ReadonlyArray<TriggerPhrase>, subject: ReadonlyArray<TriggerPhrase>): WeighedMetric => {
  const metric = scorer("Trigger phrases")
  const all = [...new Set([...subject, ...body])]
  for (const phrase of all) {
    metric.penalise(severityPoints[phrase.severity], `${quoted(phrase.phrase)} (${phrase.category}, ${phrase.severity})`, phraseSuggestion(phrase))
  }
  if (someLine(text, largeSum)) metric.penalise(severityPoints.high, "A sum of a million or more", "Leave out large sums of money: they read as lottery or inheritance fraud.")
  if (someLine(text, walletAddress)) metric.penalise(severityPoints.high, "A cryptocurrency wallet address", "Do not ask for payment to a crypto wallet.")
  return metric.done(
    `Phrases from a curated list of spam triggers, counted once each (high ${severityPoints.high}, medium ${severityPoints.medium}, low ${severityPoints.low} points), huge sums of money and crypto wallet addresses.`
  )
}

const formattingMetric = (markup: EmailMarkup, text: string, chunks: ReadonlyArray<Chunk>): WeighedMetric => {
  const metric = scorer("Formatting")
  const letters = lettersIn(text)
  const capitalShare = letters === 0 ? 0 : capitalsIn(text) / letters
  if (letters >= 20 && capitalShare > 0.3) metric.penalise(30, `${Math.round(capitalShare * 100)}% of letters are capitals`, "Write in sentence case.")
  else if (letters >= 20 && capitalShare > 0.15) metric.penalise(15, `${Math.round(capitalShare * 100)}% of letters are capitals`, "Write in sentence case.")
  const shouted = shoutedWords(chunks)
  if (shouted.length >= 3) metric.penalise(shouted.length >= 6 ? 20 : 10, `${plural(shouted.length, "word")} in capitals`, "Do not shout words in capitals.")
  const words = Math.max(1, wordsIn(chunks))
  const exclamations = text.split("!").length - 1
  const perHundred = (exclamations * 100) / words
  if (perHundred > 5) metric.penalise(20, `${plural(exclamations, "exclamation mark")} in ${plural(words, "word")}`, "Use exclamation marks sparingly.")
  else if (perHundred > 2) metric.penalise(10, `${plural(exclamations, "exclamation mark")} in ${plural(words, "word")}`, "Use exclamation marks sparingly.")
  if (/[!?]{2,}/.test(text)) metric.penalise(10, "Repeated punctuation (!!, ?!)", "Use single punctuation marks.")
  const currency = text.match(/[$€£]/g)?.length ?? 0
  if (/[$€£]{2,}/.test(text)) metric.penalise(15, "Repeated currency symbols", "Remove $$$-style symbols.")
  else if (currency >= 3) metric.penalise(10, `${currency} currency symbols`, "Mention prices once, plainly.")
  const emoji = emojiIn(text)
  if (emoji > 3) metric.penalise(emoji > 8 ? 20 : 10, `${emoji} emoji`, "Use few emoji in business e-mail.")
  if (markup.fontTags > 0) metric.penalise(5, `${plural(markup.fontTags, "<font> element")}`, "Style with CSS rather than <font>.")
  if (markup.colours.size > 3) metric.penalise(10, `${markup.colours.size} text colours`, "Use two or three text colours at most.")
  if (markup.largeFonts > 2) metric.penalise(10, `${plural(markup.largeFonts, "element")} with very large text`, "Keep body text at a normal size.")
  if (markup.hiddenCharacters > 0) metric.penalise(30, `${plural(markup.hiddenCharacters, "character")} of hidden text`, "Remove hidden text: filters treat it as a spam trick.")
  return metric.done("Capitals, exclamation marks, currency symbols, emoji, and colour, font and hidden-text tricks in the markup.")
}

/** Words that phishing hosts put in their names to look like a sign-in or billing page. */
const lureWords = /(?:^|[.-])(?:login|log-in|signin|sign-in|secure|verify|verification|account|acct|update|confirm|wallet|billing|refund|claims?|redelivery|unlock|recover)(?:[.-]|$)/
/** A well-known domain suffix inside a host's name rather than at its end: `paypal.com.verify-user.cc`, `gov-uk.claims.net`. */
const domainInside = /(?:\.|-)(?:com|net|org|gov|co|uk)(?:\.|-)(?=.*\.[a-z]{2,}$)/

/** Why a link's host looks deceptive, or `undefined`. */
const deceptiveHost = (host: string): string | undefined =>
  domainInside.test(host) ? "another domain inside its name" : lureWords.test(host) ? "sign-in or billing words in its name" : undefined

const isIpAddress = (host: string) => /^\d{1,3}(?:\.\d{1,3}){3}$/.test(host) || host.startsWith("[")

/** Links that the rewrite drops: scripts, URL shorteners, raw IP addresses, deceptive hosts and text naming another site. */
export const isRiskyLink = (link: Link): boolean => {
  if (/^(?:javascript|data|vbscript):/i.test(link.href)) return true
  const host = hostOf(link.href)
  return host !== undefined &&
    (shorteners.has(host) || isIpAddress(host) || deceptiveHost(host) !== undefined || mismatchedHosts(link) !== undefined)
}

const linksMetric = (markup: EmailMarkup, words: number): WeighedMetric => {
  const metric = scorer("Links")
  const links = markup.links.filter((link) => !/^(?:mailto:|tel:|sms:|#|\{\{)/i.test(link.href) && link.href.length > 0)
  if (links.length > 10) metric.penalise(25, `${links.length} links`, "Keep to a few links, ideally one call to action.")
  else if (links.length > 5) metric.penalise(10, `${links.length} links`, "Keep to a few links, ideally one call to action.")
  if (links.length >= 2 && words / links.length < 25) {
    metric.penalise(15, `One link per ${Math.round(words / links.length)} words`, "Write more text around fewer links.")
  }
  let shortened = 0
  let mismatched = 0
  let abused = 0
  const deceptive = new Set<string>()
  for (const link of links) {
    if (/^(?:javascript|data|vbscript):/i.test(link.href)) {
      metric.penalise(30, `Script or data link: ${link.href.slice(0, 60)}`, "Use ordinary https links.")
      continue
    }
    const host = hostOf(link.href)
    if (host === undefined) continue
    if (shorteners.has(host)) {
      shortened += 1
      if (shortened <= 2) metric.penalise(20, `URL shortener: ${host}`, "Link to your own domain instead of a URL shortener.")
    }
    if (isIpAddress(host)) metric.penalise(30, `Link to a raw IP address: ${host}`, "Link to a domain name, never an IP address.")
    else if (abusedTopLevel.has(host.slice(host.lastIndexOf(".") + 1))) {
      abused += 1
      if (abused <= 2) metric.penalise(15, `Link to a domain under a top-level domain mostly used by spam: ${host}`, "Link to your own domain on a reputable top-level domain.")
    }
    const deception = deceptiveHost(host)
    if (deception !== undefined && !deceptive.has(host)) {
      deceptive.add(host)
      if (deceptive.size <= 2) metric.penalise(20, `Deceptive link host ${host}: ${deception}`, "Link to your own domain, named plainly.")
    }
    const mismatch = mismatchedHosts(link)
    if (mismatch !== undefined) {
      mismatched += 1
      if (mismatched <= 2) {
        metric.penalise(30, `Link text shows ${mismatch.shown} but leads to ${mismatch.real}`, "Make link text match where the link goes.")
      }
    }
  }
  if (links.some((link) => /^http:\/\//i.test(link.href))) metric.penalise(10, "Links over plain http", "Use https links.")
  return metric.done(
    "Number of links, links per word, URL shorteners, raw IP addresses, abused top-level domains, deceptive hosts, unsafe schemes and anchor text that names another site."
  )
}

const imagesMetric = (markup: EmailMarkup, words: number): WeighedMetric => {
  const metric = scorer("Images")
  const images = markup.images
  if (images.length === 0) return metric.done("No images.")
  const missingAlt = images.filter((image) => image.alt === undefined).length
  if (missingAlt > 0) metric.penalise(Math.min(30, 10 * missingAlt), `${plural(missingAlt, "image")} without alt text`, "Give every image an alt text.")
  if (words < 20) metric.penalise(60, `Images with almost no text (${plural(words, "word")})`, "Never send an image-only e-mail: write the message as text.")
  else if (words / images.length < 50) metric.penalise(20, `${plural(images.length, "image")} for ${plural(words, "word")}`, "Aim for at least 50 words of text per image.")
  if (images.length > 10) metric.penalise(10, `${images.length} images`, "Use fewer images.")
  return metric.done("Image-to-text ratio and alt text.")
}

const unsubscribeWording = /unsubscribe|opt[- ]?out|manage (?:your )?(?:e-?mail )?preferences|stop receiving|no longer (?:wish|want) to receive/i
const streetWords = "street|st|avenue|ave|road|rd|boulevard|blvd|lane|ln|drive|dr|way|court|ct|place|pl|square|sq|suite|ste|floor|strasse|straße|str|rue|via|calle|plaza|parkway|pkwy|highway|hwy"
const streetAddress = new RegExp(`\\b\\d{1,5}[a-z]?,?\\s+(?:[\\p{L}.'-]{1,30}\\s+){0,4}(?:${streetWords})\\b`, "iu")
const streetFirst = new RegExp(`\\b(?:${streetWords})\\.?\\s+\\d{1,5}\\b`, "iu")
const postalCodes = [/\bp\.?\s?o\.?\s?box\s+\d+/i, /\b[A-Z]{2}\s+\d{5}(?:-\d{4})?\b/, /\b[A-Z]{1,2}\d[A-Z\d]?\s\d[A-Z]{2}\b/, /\b\d{4,5}\s+\p{Lu}\p{Ll}+/u]
/** Lines longer than this are no address and are skipped, which keeps the address patterns cheap. */
const maxAddressLine = 300

/** Every address pattern needs a digit, so lines without one are skipped cheaply. */
const hasPostalAddress = (text: string) =>
  text.split("\n").some((line) =>
    line.length <= maxAddressLine && /\d/.test(line) &&
    (streetAddress.test(line) || streetFirst.test(line) || postalCodes.some((pattern) => pattern.test(line)))
  )

/** Does the mail tell the reader how to unsubscribe (wording, a link, or an `{{unsubscribe…}}` merge field)? */
export const offersUnsubscribe = (markup: EmailMarkup, content: string): boolean =>
  unsubscribeWording.test(markup.text) ||
  markup.links.some((link) => unsubscribeWording.test(link.href)) ||
  /\{\{\s*unsubscribe/i.test(content)

/** Trigger-phrase categories that read as marketing rather than as a personal note. */
const promotionalCategories: ReadonlySet<string> = new Set([
  "urgency", "overpromise", "money", "pushy-call-to-action", "sales-hype", "impersonal-greeting", "seo-and-bulk-pitch", "finance", "health"
])

/**
 * How much the mail reads like bulk mail, 0 (a personal note) to 1 (a
 * newsletter or a promotion): HTML layout, several links, images, merge
 * fields, promotional wording, and footer wording that only bulk mail has.
 * Unsubscribe and address rules matter for bulk mail only (CAN-SPAM, GDPR).
 */
const bulkinessOf = (markup: EmailMarkup, readings: Readings, phrases: ReadonlyArray<TriggerPhrase>, unsubscribe: boolean) => {
  const links = markup.links.filter((link) => /^https?:/i.test(link.href)).length
  const signals: ReadonlyArray<readonly [boolean, number, string]> = [
    [markup.isHtml, 0.2, "HTML layout"],
    [links >= 3, 0.2, `${links} links`],
    [markup.images.length > 0, 0.2, "images"],
    [readings.template !== undefined && mergeFieldNames(readings.template).length > 0, 0.2, "merge fields"],
    [unsubscribe, 0.5, "unsubscribe wording"]
  ]
  const promotional = phrases.filter((phrase) => promotionalCategories.has(phrase.category)).length
  const found = signals.filter(([present]) => present)
  const share = Math.min(1, found.reduce((sum, [, points]) => sum + points, 0) + 0.15 * promotional)
  return { share, reasons: [...found.map(([, , reason]) => reason), ...(promotional > 0 ? [plural(promotional, "promotional phrase")] : [])] }
}

const complianceMetric = (markup: EmailMarkup, content: string, bulk: { readonly share: number; readonly reasons: ReadonlyArray<string> }): WeighedMetric => {
  const metric = scorer("Compliance")
  const percent = Math.round(bulk.share * 100)
  const context = `(the mail reads ${percent}% like bulk mail${bulk.reasons.length > 0 ? `: ${bulk.reasons.join(", ")}` : ""})`
  if (bulk.share > 0 && !offersUnsubscribe(markup, content)) {
    metric.penalise(50 * bulk.share, `No unsubscribe link or wording ${context}`, "Add an unsubscribe link or line (required for bulk mail; CAN-SPAM, GDPR).")
  }
  if (bulk.share > 0 && !hasPostalAddress(markup.text)) {
    metric.penalise(30 * bulk.share, `No postal address found ${context}`, "Add the sender's postal address in the footer (CAN-SPAM).")
  }
  return metric.done(
    `An unsubscribe link or wording (up to 50 points) and the sender's postal address (up to 30), weighed by how much the mail reads like bulk mail (${percent}%): a one-to-one note needs neither.`
  )
}

const lengthMetric = (markup: EmailMarkup, content: string, words: number): WeighedMetric => {
  const metric = scorer("Length")
  if (words < 20) metric.penalise(50, `Very short (${plural(words, "word")})`, "Write at least a few sentences; very short mail looks like a probe.")
  else if (words < 50) metric.penalise(20, `Short (${plural(words, "word")})`, "A message of 50–300 words reads best.")
  if (words > 2000) metric.penalise(30, `Very long (${plural(words, "word")})`, "Shorten the message; link to the rest.")
  else if (words > 1000) metric.penalise(15, `Long (${plural(words, "word")})`, "Shorten the message; link to the rest.")
  const bytes = Buffer.byteLength(content, "utf8")
  if (bytes > gmailClipBytes) metric.penalise(60, `${Math.round(bytes / 1024)} KB: Gmail clips messages over about 102 KB`, "Bring the HTML under 100 KB (inline less CSS, fewer nested tables).")
  else if (bytes > 80 * 1024) metric.penalise(15, `${Math.round(bytes / 1024)} KB: close to Gmail's ~102 KB clipping`, "Trim the HTML.")
  if (markup.isHtml && bytes > 10 * 1024 && markup.text.length / content.length < 0.05) {
    metric.penalise(10, "Mostly markup, little text", "Trim the markup or add text.")
  }
  return metric.done(`Word count and size (Gmail clips at about ${gmailClipBytes / 1024} KB).`)
}

const foreignTags: ReadonlyArray<readonly [RegExp, string]> = [
  [/\*\|[A-Z0-9_]{1,40}\|\*/, "Mailchimp-style *|TAG|*"],
  [/%[A-Z][A-Z0-9_]{1,40}%/, "%TAG%-style"],
  [/\[(?:first|last|full|company)[ _-]?name\]/i, "[First Name]-style"],
  [/(?:^|[^{])\{(?:first|last|full|company)_?name\}/i, "{first_name}-style"],
  [/\{\{\{/, "triple-brace"]
]

const personalisationMetric = (readings: Readings, content: string, bulk: number): WeighedMetric => {
  const metric = scorer("Personalisation")
  if (readings.syntaxError !== undefined) {
    metric.penalise(60, `Malformed merge field or spintax: ${readings.syntaxError}`, "Balance every {{ with }}; recipients would see the braces.")
  }
  for (const [pattern, kind] of foreignTags) {
    if (pattern.test(content)) metric.penalise(40, `${kind} merge tag that this platform does not fill`, "Use {{fieldName}} merge fields.")
  }
  const fields = readings.template === undefined ? [] : mergeFieldNames(readings.template)
  if (readings.syntaxError === undefined && fields.length === 0 && bulk > 0) {
    metric.penalise(30 * bulk, "No merge fields in a mail that reads like bulk mail", "Personalise with merge fields such as {{firstName}}.")
  }
  const variants = readings.template === undefined ? 1 : countVariants(readings.template)
  const notes = [
    fields.length > 0 ? `Merge fields: ${fields.join(", ")}.` : undefined,
    variants > 1 ? `Spintax gives ${variants} variants.` : undefined
  ].filter((note) => note !== undefined)
  return metric.done(["Merge fields, and merge tags or spintax that would reach recipients unexpanded.", ...notes].join(" "))
}

/** Analyses an e-mail body (plain text or HTML) and optional subject. */
export const analyse = (content: string, subject: string | undefined): SpamAnalysis => {
  const markup = readEmail(content)
  const readings = readingsOf(markup.text)
  const chunks = chunksOf(readings.sample)
  const words = wordsIn(chunks)
  const subjectPhrases = subject === undefined ? [] : findTriggerPhrases(readingsOf(subject).everyOption)
  const bodyPhrases = findTriggerPhrasesIn(readings.everyOption === readings.sample ? chunks : chunksOf(readings.everyOption))
  const bulk = bulkinessOf(markup, readings, [...subjectPhrases, ...bodyPhrases], offersUnsubscribe(markup, content))
  const metrics = [
    subjectMetric(subject),
    triggerMetric(readings.sample, bodyPhrases, subjectPhrases),
    formattingMetric(markup, readings.sample, chunks),
    linksMetric(markup, words),
    imagesMetric(markup, words),
    complianceMetric(markup, content, bulk),
    lengthMetric(markup, content, words),
    personalisationMetric(readings, content, bulk.share)
  ]
  const spamWordsFound = [...new Set([...subjectPhrases, ...bodyPhrases].map((phrase) => phrase.phrase))]
  return scoreMetrics(metrics, hasSubject(subject), spamWordsFound)
}
