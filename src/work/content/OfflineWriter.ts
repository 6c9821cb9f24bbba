import type { ContentKind, ContentLength, WritingRequest } from "./Kinds.ts"

/**
 * The content engine without a model provider (only the offline `local`
 * models): deterministic templates filled from the brief and the brand kit;
 * the tone only picks the e-mail's greeting and sign-off. It does not
 * understand the brief — it restates it — but each kind comes out in its shape (a subject and a greeting-to-sign-off e-mail,
 * five subject lines, a post with hashtags, a titled Markdown article, three
 * ad variants, a landing page's sections), in the same text format a model is
 * asked for, so one parser reads both (`Writing.ts`).
 */

const stopWords = new Set(
  ("a about after all also an and any are as at be because been but by can could do for from get has have how " +
    "i if in into is it its just more most my new not of on or our out over so some such than that the their them " +
    "then there these they this to up us was we what when which who will with would you your write draft create " +
    "compose generate make please email e-mail post blog article copy page landing subject lines line social ad ads " +
    "announce announcing introduce introducing promote promoting tell customers short long tone").split(" ")
)

/** "Write an email announcing our spring sale. Mention…" → "our spring sale". */
export const topicOf = (brief: string): string => {
  const firstSentence = brief.trim().split(/(?<=[.!?])\s+|\n/)[0] ?? brief
  const topic = firstSentence
    .replace(/^(?:please\s+)?(?:write|draft|create|compose|generate|make|give me)\s+(?:me\s+)?(?:an?|the|some|\d+)?\s*(?:[\w-]+\s+){0,3}?(?:about|on|for|announcing|introducing|promoting|that announces|to announce)\s+/i, "")
    .replace(/[.!?]+$/, "")
    .trim()
  return (topic === "" ? firstSentence : topic).slice(0, 90).trim()
}

const capitalized = (text: string) => text.charAt(0).toUpperCase() + text.slice(1)

/** The brief's most telling words, in order of appearance. */
export const keywordsOf = (brief: string, count: number): Array<string> => {
  const seen = new Set<string>()
  for (const match of brief.toLowerCase().matchAll(/[\p{L}\p{N}][\p{L}\p{N}'-]*/gu)) {
    const word = match[0].replace(/'s$/, "")
    if (word.length >= 4 && !stopWords.has(word) && !/^\d+$/.test(word)) seen.add(word)
    if (seen.size === count) break
  }
  return [...seen]
}

/** The brief's sentences after the first: the details it asks to mention. */
const detailsOf = (brief: string): Array<string> =>
  brief.trim().split(/(?<=[.!?])\s+|\n+/).slice(1).map((sentence) => sentence.trim()).filter((sentence) => sentence !== "")

const paragraphs: Record<ContentLength, number> = { short: 1, medium: 2, long: 4 }

export interface OfflineBrand {
  readonly name: string | null
  readonly tone: string | undefined
  readonly website: string | undefined
}

/** The greeting and sign-off a tone asks for (the request's, else the brand's): the one thing tone changes offline. */
const register = (tone: string | undefined) => {
  const words = (tone ?? "").toLowerCase()
  if (/formal|professional|serious|corporate/.test(words)) return { greeting: "Dear {{firstName}},", signOff: "Kind regards" }
  if (/casual|playful|fun|friendly|relaxed|cheerful/.test(words)) return { greeting: "Hey {{firstName}}!", signOff: "Cheers" }
  return { greeting: "Hi {{firstName}},", signOff: "Best regards" }
}

const email = (request: WritingRequest, brand: OfflineBrand) => {
  const topic = topicOf(request.brief)
  const details = detailsOf(request.brief)
  const sender = brand.name ?? "The team"
  const { greeting, signOff } = register(request.tone ?? brand.tone)
  const body = [
    greeting,
    `We wanted you to be among the first to hear about ${topic}.`,
    ...details.slice(0, paragraphs[request.length]),
    ...(request.length === "short" ? [] : [`Here is why it matters to you: ${keywordsOf(request.brief, 3).join(", ")} — all in one place.`]),
    brand.website === undefined ? "Reply to this e-mail to learn more." : `Learn more at ${brand.website}.`,
    `${signOff},\n${sender}`
  ]
  return `Subject: ${capitalized(topic)}\n\n${body.join("\n\n")}`
}

const subjectLines = (request: WritingRequest) => {
  const topic = topicOf(request.brief)
  const [first = topic] = keywordsOf(request.brief, 1)
  return [
    capitalized(topic),
    `Quick question about ${first}`,
    `${capitalized(topic)}: what you need to know`,
    `New for you: ${topic}`,
    `Don't miss ${topic}`
  ].map((line, index) => `${index + 1}. ${line}`).join("\n")
}

const hashtags = (brief: string) => keywordsOf(brief, 3).map((word) => `#${word.replaceAll(/[^\p{L}\p{N}]/gu, "")}`).join(" ")

const socialPost = (request: WritingRequest, brand: OfflineBrand) => {
  const topic = topicOf(request.brief)
  const details = detailsOf(request.brief).slice(0, paragraphs[request.length])
  return [
    `${capitalized(topic)}${request.length === "short" ? "!" : " — and we can't wait to share it with you."}`,
    ...details,
    brand.website === undefined ? "Tell us what you think in the comments." : `More: ${brand.website}`,
    hashtags(request.brief)
  ].join("\n\n")
}

const blogPost = (request: WritingRequest, brand: OfflineBrand) => {
  const topic = topicOf(request.brief)
  const keywords = keywordsOf(request.brief, paragraphs[request.length] + 1)
  const sections = keywords.map((word) =>
    `## ${capitalized(word)}\n\n${capitalized(word)} is at the heart of ${topic}. ` +
    `This section explains what it means for you and how to make the most of it.`)
  return [
    `# ${capitalized(topic)}`,
    `${brand.name === null ? "We" : brand.name} put together what you need to know about ${topic}.`,
    ...detailsOf(request.brief),
    ...sections,
    `## In short\n\n${capitalized(topic)}: ${keywords.join(", ")}. Questions? We are happy to help.`
  ].join("\n\n")
}

const adCopy = (request: WritingRequest, brand: OfflineBrand) => {
  const topic = topicOf(request.brief)
  const [first = topic, second = first] = keywordsOf(request.brief, 2)
  const who = brand.name ?? "us"
  return [
    `Headline: ${capitalized(topic).slice(0, 30)}\nDescription: Discover ${topic} with ${who}. Start today.`,
    `Headline: ${capitalized(first)} made simple\nDescription: ${capitalized(topic)} — ${second} without the hassle.`,
    `Headline: Try ${first} now\nDescription: See why people choose ${who} for ${first}. Learn more.`
  ].join("\n---\n")
}

const landingCopy = (request: WritingRequest, brand: OfflineBrand) => {
  const topic = topicOf(request.brief)
  const keywords = keywordsOf(request.brief, 3)
  return [
    `# ${capitalized(topic)}`,
    `${brand.name === null ? "Everything" : `${brand.name} brings you everything`} you need for ${topic}.`,
    `## Why it works`,
    keywords.map((word) => `- **${capitalized(word)}**: built around ${word}, so you get results sooner.`).join("\n"),
    ...detailsOf(request.brief).slice(0, paragraphs[request.length]),
    `## Get started`,
    brand.website === undefined ? `[Get started](#)` : `[Get started](${brand.website})`
  ].join("\n\n")
}

const writers: Record<ContentKind, (request: WritingRequest, brand: OfflineBrand) => string> = {
  email,
  subject_lines: subjectLines,
  social_post: socialPost,
  blog_post: blogPost,
  ad_copy: adCopy,
  landing_copy: landingCopy
}

/** The offline text for `request`, in the format `parseWriting` reads. */
export const writeOffline = (request: WritingRequest, brand: OfflineBrand): string => writers[request.kind](request, brand)
