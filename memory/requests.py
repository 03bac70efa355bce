"""What an end user can ask of the memory in any chat (R22), answered before any model is asked.

* "stop remembering me" (and its plain variants, "delete my data", "forget everything", "भूल जाओ"),
  anywhere in a message: exactly `memory_stop`, with an audit row of kind `end_user_request`; the
  commit empties the notes of their chats, this one included, so the rest of it does not lean on it.
* "forget that I work from Pune" / "remove what you know about my phone": the matching line(s) are
  removed (one `commit.memory_commit`, audit row of kind `end_user_request`), the reply says what
  was removed, and what they said before that is not read yet is read later with it excluded.
* "what do you remember about me?": the lines, as the chat's agent would see them; in a chat that
  does not use memory, that this chat does not use it (and how to manage it).

Stop and forget work whether or not memory is used for the conversation. Recognition is plain
rules over the text, in English, Spanish and Hindi (Devanagari and romanised), and for a stop also
French, German and Portuguese: a message that only looks like one ("don't forget to email me the
receipt", "I forgot my password") is left to the normal reply.

Registered as `agents.extensions.registry.end_user_request` in `MemoryConfig.ready`.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone

from agents.models import Conversation

from . import policy
from .models import Memory, MemoryRun
from .commit import memory_commit, memory_locked
from .note import note_lines, render_note
from .services import memory_stop

MAX_REQUEST_CHARS = 500  # a forget or show request is a short message; longer ones are not parsed for them
MAX_MESSAGE_CHARS = 4000  # a stop is looked for in any chat message (agents.chat.MAX_MESSAGE_CHARS)
MAX_PARTS = 60  # sentences per message, clauses per sentence
MIN_MATCH_SHARE = 0.5  # a line is "about" the subject when it holds at least half its words


@dataclass(frozen=True)
class EndUserRequest:
    kind: str  # "stop", "forget" or "show"
    lang: str  # "en", "es" or "hi": the language of the reply
    subject: str = ""  # for "forget": what to remove, in their words
    explicit: bool = True  # "forget that ..." (explicit) vs a bare "forget the receipt"


# --- Recognising a request ------------------------------------------------------------------

_LEADING = re.compile(
    r"^(?:hi|hello|hey|hiya|ok|okay|so|and|also|um|well|please|pls|plz|kindly|now|actually|listen|"
    r"hola|oye|por favor|namaste|namaskar|suno|ji|नमस्ते|कृपया|"
    r"(?:can|could|would|will) (?:you|u)(?: please)?|"
    r"i (?:want|would like|'d like|need) you to|"
    r"(?:puedes|podr[ií]as)(?: por favor)?)\b[\s,!.]*"
)
_TRAILING = re.compile(
    r"[\s,]*\b(?:please|pls|plz|thanks|thank you|por favor|gracias|ji|now|right now|anymore|any more|"
    r"from now on|again|kripya|please ji|bitte|danke|s'il (?:te|vous) pla[iî]t|merci|obrigad[oa])$"
)
_EDGE_CHARS = " \t.!?¿¡,;:\"'।"


def _normalise(text: str) -> str:
    out = unicodedata.normalize("NFC", text).lower()
    out = out.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    out = re.sub(r"\s+", " ", out).strip(_EDGE_CHARS)
    previous = None
    while previous != out:
        previous = out
        out = _LEADING.sub("", out).strip(_EDGE_CHARS)
        out = _TRAILING.sub("", out).strip(_EDGE_CHARS)
    return out


_ABOUT_ME = r"(?:about|on|of) me"
_MY_DATA = r"my (?:data|details|info|information|chats|conversations|messages)"

_STOP = {
    "en": [
        rf"(?:stop|quit|cease) (?:remembering|storing|saving|keeping|recording|tracking) "
        rf"(?:me|(?:anything|things|stuff|details|information|info) {_ABOUT_ME}|what i (?:say|tell you)|{_MY_DATA})",
        rf"(?:do not|don't|dont|never) (?:remember|store|save|keep) "
        rf"(?:me|anything(?: {_ABOUT_ME})?|things {_ABOUT_ME}|(?:details|information|info) {_ABOUT_ME}|{_MY_DATA})",
        rf"i (?:do not|don't|dont) want (?:you|the assistant|this assistant|the bot) to (?:remember|store|keep|save) "
        rf"(?:me|anything(?: {_ABOUT_ME})?|things {_ABOUT_ME}|{_MY_DATA})",
        r"forget (?:me|about me|everything|all of it|everything about me|all about me|"
        r"(?:everything|all|whatever|what|anything) you (?:know|remember) about me)",
        r"(?:turn|switch) off (?:your |the )?memory(?: (?:about|of|for|on) me)?",
        r"(?:disable|delete|erase|wipe|clear) (?:your |the )?(?:memory|memories) (?:about|of|for|on) me",
        r"stop remembering",
        rf"(?:delete|erase|wipe|remove|clear) (?:all )?(?:of )?{_MY_DATA}",
        r"(?:delete|erase|wipe|remove|clear) (?:everything|all|whatever|anything) you (?:know|have|remember|keep|store) (?:about|on|of) me",
        r"forget (?:everything|it all|all)(?: (?:you know|you remember|i (?:said|told you)))?",
    ],
    "es": [
        r"(?:deja|dej[aá]|deje|dejad|para) de recordarme",
        r"(?:deja|dej[aá]|deje|para) de (?:recordar|guardar) (?:cosas|nada|datos|informaci[oó]n) (?:sobre|de) m[ií]",
        r"(?:ya )?no me recuerdes(?: m[aá]s)?",
        r"olv[ií]dame",
        r"olvida todo(?: lo que sabes)?(?: (?:sobre|de) m[ií])?",
        r"no (?:guardes|recuerdes) nada (?:sobre|de) m[ií]",
        r"(?:borra|elimina|suprime) (?:todos )?mis datos",
    ],
    "fr": [
        r"(?:arr[eê]te|arr[eê]tez|cesse|cessez) de (?:te|vous) souvenir de moi",
        r"(?:arr[eê]te|arr[eê]tez) de (?:m[eé]moriser|retenir|garder) (?:mes donn[eé]es|quoi que ce soit sur moi|des choses sur moi)",
        r"oublie[- ]moi|oubliez[- ]moi|oublie tout|oubliez tout",
        r"ne (?:te|vous) souviens? (?:plus )?(?:pas )?de moi",
        r"(?:supprime|supprimez|efface|effacez) (?:toutes )?mes donn[eé]es",
    ],
    "de": [
        r"h[öo]r(?:en sie)? auf,? (?:dich|sich) an mich zu erinnern",
        r"vergiss mich|vergessen sie mich|vergiss alles|vergessen sie alles",
        r"erinnere dich nicht (?:mehr )?an mich",
        r"(?:l[öo]sch|l[öo]sche|l[öo]schen sie) (?:alle )?meine daten",
        r"speicher(?:e|n sie)? nichts (?:mehr )?[üu]ber mich",
    ],
    "pt": [
        r"(?:pare|para|deixe|deixa) de (?:se )?lembrar de mim",
        r"esque[çc]a[- ]me|me esque[çc]a|esquece[- ]me|me esquece|esque[çc]a tudo|esquece tudo",
        r"(?:apague|apaga|exclua|exclui) (?:todos )?(?:os )?meus dados",
        r"n[aã]o (?:se )?lembre de mim",
    ],
    "hi": [
        r"(?:mujhe|mujhko|muje) yaad (?:mat|na|naa) (?:rakho|rakhna|rakhiye|rakhen|rakhein|karo|kijiye)",
        r"(?:mujhe|mujhko|muje) yaad rakhna band (?:karo|kariye|kijiye|kar do|kar dijiye|karen|karein)",
        r"(?:mujhe|mujhko|muje) bhool (?:jao|jaiye|jaao|jayiye)",
        r"mere baare (?:mein|me|main) (?:kuch )?(?:bhi )?yaad (?:mat|na) (?:rakho|rakhiye|rakhna)",
        r"मुझे याद (?:मत|न|ना) (?:रखो|रखें|रखिए|रखना|करो)",
        r"मुझे याद रखना बंद (?:करो|करें|कीजिए|करिए|कर दो|कर दीजिए)",
        r"मुझे भूल (?:जाओ|जाइए|जाएँ|जाएं)",
        r"मेरे बारे में (?:कुछ )?(?:भी )?याद (?:मत|न) (?:रखो|रखें|रखिए)",
        r"(?:सब |सब कुछ |सारा |मुझे )?भूल (?:जाओ|जाइए|जाएँ|जाएं)",
        r"(?:sab |sab kuch |mujhe )?bhool (?:jao|jaiye|jaao|jayiye)",
        r"(?:मेरा|मेरी) (?:डेटा|डाटा|जानकारी) (?:हटा|मिटा|डिलीट कर) (?:दो|दीजिए|दें)",
        r"(?:mera|meri) (?:data|jaankari|jankari) (?:hata|mita|delete kar) (?:do|dijiye|den)",
    ],
}

_SHOW = {
    "en": [
        r"what (?:do|did|else do|exactly do|all do) you (?:remember|recall)(?: (?:about|of) me)?"
        r"(?: from (?:before|our (?:last |previous |earlier |other )?(?:chats?|conversations?)))?",
        rf"what (?:do|did|else do|exactly do|all do) you (?:know|have|keep|store|save|hold) {_ABOUT_ME}",
        rf"what (?:have|did) you (?:remembered|remember|kept|keep|stored|store|saved|save|learned|learnt|noted) {_ABOUT_ME}",
        r"what(?: is|'s| are)(?: in)? (?:your|my) (?:memory|memories|notes?)(?: (?:about|of|on) me)?",
        rf"(?:show|tell|give) me (?:what you (?:remember|know|have|keep)(?: {_ABOUT_ME})?|my memory|"
        rf"your (?:memory|memories|notes?)(?: {_ABOUT_ME})?)",
        r"do you remember (?:me|anything about me)",
    ],
    "es": [
        r"qu[ée] (?:recuerdas|sabes|guardas|tienes) (?:de|sobre) m[ií]",
        r"qu[ée] recuerdas",
        r"(?:te acuerdas de m[ií]|me recuerdas)",
    ],
    "hi": [
        r"(?:tumhe|tumhein|tumko|aapko|apko|aap ko|tum ko) mere baare (?:mein|me|main) kya (?:yaad|pata) hai",
        r"mere baare (?:mein|me|main) (?:tumhe|tumhein|tumko|aapko|apko) kya (?:yaad|pata) hai",
        r"(?:आपको|तुम्हें|तुमको) मेरे बारे में क्या (?:याद|पता) है",
        r"मेरे बारे में (?:आपको|तुम्हें|तुमको) क्या (?:याद|पता) है",
    ],
}

# (pattern with a `subject` group, explicit?) in the order they are tried.
_FORGET = {
    "en": [
        (r"forget (?:that|the fact that|about|what i said about|what i told you about|that i said|that i told you|"
         r"what you know about|what you remember about|everything about|anything about|my) (?P<subject>.+)", True),
        (r"(?:remove|delete|erase|drop|clear) (?:what you know about|what you remember about|everything you know about|"
         r"anything you know about|the (?:fact|line|note|thing) (?:that|about)|from (?:your|the) memory(?: that)?|"
         r"what i (?:said|told you) about) (?P<subject>.+)", True),
        (r"(?:remove|delete|erase|drop|clear) (?P<subject>.+?) from (?:your|the|my) (?:memory|memories|notes?)", True),
        (r"(?:do not|don't|dont|stop|never) (?:remember|remembering|keep|keeping|store|storing|save|saving) "
         r"(?:that|the fact that|about|what i said about) (?P<subject>.+)", True),
        (r"forget (?P<subject>.+)", False),
    ],
    "es": [
        (r"olvida (?:que|lo de|lo que sabes (?:de|sobre)|lo que te dije (?:de|sobre)) (?P<subject>.+)", True),
        (r"(?:borra|elimina|quita) (?:que|lo de|lo que sabes (?:de|sobre)|de tu memoria(?: que)?) (?P<subject>.+)", True),
        (r"olvida (?P<subject>.+)", False),
    ],
    "hi": [
        (r"(?:yeh|ye|ya|yah) (?:baat )?bhool (?:jao|jaiye|jaao) (?:ki )?(?P<subject>.+)", True),
        (r"(?P<subject>.+?) (?:wali baat |vali baat |waali baat |baat )?bhool (?:jao|jaiye|jaao|jayiye)", True),
        (r"(?:यह|ये) (?:बात )?भूल (?:जाओ|जाइए|जाएँ|जाएं) (?:कि )?(?P<subject>.+)", True),
        (r"(?P<subject>.+?) (?:वाली बात |बात )?भूल (?:जाओ|जाइए|जाएँ|जाएं)", True),
    ],
}

_IDIOM = re.compile(r"(?:it|that|this|them|those|esto|eso|lo)\b(?!\s+(?:i|my|you)\b)")
_COMPILED_STOP = [(lang, re.compile(p)) for lang, patterns in _STOP.items() for p in patterns]
_COMPILED_SHOW = [(lang, re.compile(p)) for lang, patterns in _SHOW.items() for p in patterns]
_COMPILED_FORGET = [(lang, re.compile(p), explicit) for lang, patterns in _FORGET.items() for p, explicit in patterns]


_SENTENCE = re.compile(r"[.!?;\n\u0964\u0965]+")
_CLAUSE = re.compile(r",|\s(?:but|and|so|because|pero|y|mais|et|aber|und|mas|e|lekin|aur|par|लेकिन|और|पर)\s")


def _parts(text: str) -> list[str]:
    """A message's sentences, and each sentence's clauses, in order: where a stop request inside a
    longer message is looked for ("Thanks for the help. Please stop remembering me, I don't like
    it."). Each must still be the request as a whole, so "if you stop remembering me" is not one."""
    parts: list[str] = []
    for sentence in _SENTENCE.split(text)[:MAX_PARTS]:
        if sentence.strip():
            parts.append(sentence)
            parts.extend(clause for clause in _CLAUSE.split(sentence)[:MAX_PARTS] if clause.strip() and clause != sentence)
    return parts


def _stop_in(text: str) -> EndUserRequest | None:
    for part in _parts(text):
        normal = _normalise(part)
        for lang, pattern in _COMPILED_STOP:
            if normal and pattern.fullmatch(normal):
                return EndUserRequest("stop", lang)
    return None


def recognise(text: str) -> EndUserRequest | None:
    """The memory request this message makes, or None. A stop ("stop remembering me", "delete my
    data", "forget everything", "भूल जाओ", in the languages above) counts anywhere in a message,
    as one of its sentences or clauses; "forget ..." and "what do you remember" only as the whole
    message (after greetings and "please"), so ordinary chat is never mistaken for one."""
    if not isinstance(text, str) or len(text) > MAX_MESSAGE_CHARS:
        return None
    stop = _stop_in(text)
    if stop is not None:
        return stop
    if len(text) > MAX_REQUEST_CHARS:
        return None
    normal = _normalise(text)
    if not normal:
        return None
    for lang, pattern in _COMPILED_SHOW:
        if pattern.fullmatch(normal):
            return EndUserRequest("show", lang)
    for lang, pattern, explicit in _COMPILED_FORGET:
        match = pattern.fullmatch(normal)
        if match:
            subject = match.group("subject").strip(_EDGE_CHARS)
            if not _words(subject) or _IDIOM.match(subject):  # "forget it", "forget about that, it's fine"
                return None
            return EndUserRequest("forget", lang, subject=subject, explicit=explicit)
    return None


# --- Which lines a "forget" is about --------------------------------------------------------

_STOPWORDS = frozenset(
    """
    a an the and or but if of to in on at for from with by as into over under about than then that this these those
    it its is am are was were be been being do does did have has had will would can could should shall may might must
    i me my mine myself you your yours we us our they them their he she his her him what which who whom whose when where
    why how all any anything everything something nothing thing things fact facts line note notes stuff bit part
    know knew remember remembered said say says told tell telling please also just really very so too not no
    like im i'm i've i'd i'll id ive don't dont do've there here again now ever one
    que de del la el los las en y o yo mi mis me te tu sobre lo un una unos unas es soy estoy con por para al
    main mein me mera meri mere ki ka ke hoon hu hun hai se ko yeh ye wala wali baat aur bhi
    मैं में मेरा मेरी मेरे की का के हूँ हूं है से को यह ये वाली बात और भी कि
    """.split()
)
_SAID_ONCE = re.compile(r"\(said once[^)]*\)", re.I)
_WORD = re.compile(r"[\w\u0900-\u097F]+")


def _stem(word: str) -> str:
    for suffix in ("ences", "ence", "ings", "ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiousl":
                word = word[:-1]  # preferred -> prefer, stopping -> stop
            return word
    if re.search(r"(?:ss|sh|ch|x)es$", word):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def _words(text: str) -> set[str]:
    text = _SAID_ONCE.sub(" ", text.lower()).replace("'s", "")
    return {_stem(w) for w in _WORD.findall(text) if w not in _STOPWORDS and not w.isdigit() or w.isdigit() and len(w) <= 4}


def _same_word(a: str, b: str) -> bool:
    if a == b:
        return True
    short, long_ = sorted((a, b), key=len)
    return len(short) >= 3 and long_.startswith(short) and len(long_) - len(short) <= 2  # move ~ mov(ed)


def lines_about(subject: str, lines: list[str]) -> list[str]:
    """The lines a "forget <subject>" is about: those sharing the largest part of the subject's
    words, when that is at least half of them. Removing one line too many is the safe side (R10)."""
    wanted = {w for w in _words(subject) if not w.isdigit()} or _words(subject)
    if not wanted:
        return []
    scored = []
    for line in lines:
        have = _words(line)
        share = sum(1 for w in wanted if any(_same_word(w, h) for h in have)) / len(wanted)
        scored.append((share, line))
    best = max((share for share, _ in scored), default=0)
    if best < MIN_MATCH_SHARE:
        return []
    return [line for share, line in scored if share == best]


# --- Replies --------------------------------------------------------------------------------

REPLIES = {
    "en": {
        "stopped": "Done. I've forgotten what I remembered about you, and I won't remember anything more from our chats.",
        "already_stopped": "I've already stopped remembering you. I keep nothing from our chats.",
        "removed": "Done. I've removed this from what I remember about you: {lines}",
        "hidden": "{count} line(s) I can't repeat here",
        "nothing_matched": "I don't have anything about that in what I remember about you, so there was nothing to remove. I won't keep it from what you said earlier either.",
        "nothing_remembered": "I don't remember anything about you, so there was nothing to remove. I won't keep it from what you said earlier either.",
        "show": 'Here is what I remember about you:\n{lines}\nSay "forget ..." to remove one of these, or "stop remembering me" and I will keep nothing.',
        "show_empty": "I don't remember anything about you yet.",
        "show_stopped": "I don't remember anything about you: you asked me to stop, so I keep nothing from our chats.",
        "show_off": 'This chat does not use memory: nothing remembered about you is used here, and nothing from it is kept. In any chat you can say "forget ..." to remove something, or "stop remembering me" and I will keep nothing.',
    },
    "es": {
        "stopped": "Hecho. He olvidado lo que recordaba de ti y no guardaré nada más de nuestras conversaciones.",
        "already_stopped": "Ya dejé de recordarte. No guardo nada de nuestras conversaciones.",
        "removed": "Hecho. He quitado esto de lo que recuerdo de ti: {lines}",
        "hidden": "{count} línea(s) que no puedo repetir aquí",
        "nothing_matched": "No tengo nada sobre eso en lo que recuerdo de ti, así que no había nada que quitar. Tampoco lo guardaré de lo que dijiste antes.",
        "nothing_remembered": "No recuerdo nada de ti, así que no había nada que quitar. Tampoco lo guardaré de lo que dijiste antes.",
        "show": 'Esto es lo que recuerdo de ti:\n{lines}\nDi "olvida que ..." para quitar algo, o "deja de recordarme" y no guardaré nada.',
        "show_empty": "Todavía no recuerdo nada de ti.",
        "show_stopped": "No recuerdo nada de ti: me pediste que dejara de hacerlo, así que no guardo nada de nuestras conversaciones.",
        "show_off": 'Esta conversación no usa la memoria: aquí no se usa nada de lo que recuerdo de ti, y no guardo nada de ella. En cualquier conversación puedes decir "olvida que ..." para quitar algo, o "deja de recordarme" y no guardaré nada.',
    },
    "hi": {
        "stopped": "ठीक है। आपके बारे में जो कुछ मुझे याद था, वह मैंने भुला दिया है, और अब से हमारी बातचीत से कुछ भी याद नहीं रखूँगा।",
        "already_stopped": "मैं पहले ही आपको याद रखना बंद कर चुका हूँ। हमारी बातचीत से कुछ भी नहीं रखता।",
        "removed": "ठीक है। मैंने यह अपनी याद से हटा दिया है: {lines}",
        "hidden": "{count} पंक्ति जो मैं यहाँ दोहरा नहीं सकता",
        "nothing_matched": "आपके बारे में मुझे इससे जुड़ा कुछ याद नहीं है, इसलिए हटाने को कुछ नहीं था। आपने पहले जो कहा, उससे भी इसे नहीं रखूँगा।",
        "nothing_remembered": "मुझे आपके बारे में कुछ याद नहीं है, इसलिए हटाने को कुछ नहीं था। आपने पहले जो कहा, उससे भी इसे नहीं रखूँगा।",
        "show": 'मुझे आपके बारे में यह याद है:\n{lines}\nकुछ हटाना हो तो "... भूल जाओ" कहें, या "मुझे याद रखना बंद करो" कहें।',
        "show_empty": "मुझे अभी आपके बारे में कुछ याद नहीं है।",
        "show_stopped": "मुझे आपके बारे में कुछ याद नहीं है: आपने याद रखना बंद करने को कहा था, इसलिए मैं कुछ नहीं रखता।",
        "show_off": 'यह बातचीत याद का उपयोग नहीं करती: यहाँ आपके बारे में याद रखी कोई बात काम में नहीं ली जाती, और इससे कुछ नहीं रखा जाता। किसी भी बातचीत में "... भूल जाओ" या "मुझे याद रखना बंद करो" कह सकते हैं।',
    },
    # Languages recognised for a stop only: the replies a stop needs.
    "fr": {
        "stopped": "C'est fait. J'ai oublié ce que je savais de vous, et je ne garderai plus rien de nos conversations.",
        "already_stopped": "J'ai déjà arrêté de me souvenir de vous. Je ne garde rien de nos conversations.",
    },
    "de": {
        "stopped": "Erledigt. Ich habe vergessen, was ich über Sie wusste, und behalte nichts mehr aus unseren Gesprächen.",
        "already_stopped": "Ich erinnere mich bereits nicht mehr an Sie. Ich behalte nichts aus unseren Gesprächen.",
    },
    "pt": {
        "stopped": "Pronto. Esqueci o que sabia sobre você e não vou guardar mais nada das nossas conversas.",
        "already_stopped": "Já deixei de me lembrar de você. Não guardo nada das nossas conversas.",
    },
}


def _quotable(line: str) -> bool:
    """A reply never quotes a line the policy would refuse (R7), even back to its owner."""
    return policy.line_refusal(line, check_categories=False) is None


def _quoted(lines: list[str], lang: str) -> str:
    shown = [f'"{line}"' for line in lines if _quotable(line)]
    hidden = len(lines) - len(shown)
    if hidden:
        shown.append(REPLIES[lang]["hidden"].format(count=hidden))
    return "; ".join(shown)


# --- Answering it ---------------------------------------------------------------------------


def _stop(conversation: Conversation, memory: Memory | None, lang: str, now: datetime) -> str:
    if memory is not None and memory.stopped_at is not None:
        return REPLIES[lang]["already_stopped"]
    memory_stop(end_user=conversation.end_user, stop=True, kind=MemoryRun.Kind.END_USER_REQUEST, now=now)
    conversation.memory_note = ""  # the commit emptied their chats' notes: this one too
    return REPLIES[lang]["stopped"]


MAX_FORGET_SUBJECTS = 20
MAX_SUBJECT_CHARS = 300


def _pending_with(pending: dict | None, *, now: datetime, subject: str, removed: list[str]) -> dict:
    """The pending forget after one more: the chats before `now` are read with every subject and
    removed line excluded (kept only until the writer has read past it, then dropped)."""
    pending = pending or {"subjects": [], "lines": []}
    return {
        "before": now.isoformat(),
        "subjects": (pending["subjects"] + [subject[:MAX_SUBJECT_CHARS]])[-MAX_FORGET_SUBJECTS:],
        "lines": list(dict.fromkeys(pending["lines"] + removed))[-policy.MAX_LINES :],
    }


def _forget(conversation: Conversation, request: EndUserRequest, now: datetime) -> str | None:
    """Remove the lines about the subject now, and keep the rest of what they said: their chats
    not yet read are read later with the forgotten fact excluded (`Memory.forget_pending`), so
    nothing from before the forget brings it back, and nothing else said there is lost."""
    lang = request.lang
    with memory_locked(conversation.end_user, now) as memory:
        if memory.stopped_at is not None:
            return REPLIES[lang]["show_stopped"]
        lines = memory.lines
        removed = lines_about(request.subject, lines)
        if not removed and not request.explicit:
            return None  # a bare "forget the receipt" that is about nothing remembered is ordinary chat
        gone = set(removed)
        kept = [line for line in lines if line not in gone and _quotable(line)]
        pending = _pending_with(memory.forget_pending, now=now, subject=request.subject, removed=removed)
        memory_commit(memory, now=now, kind=MemoryRun.Kind.END_USER_REQUEST, lines=kept, forget=pending, audit=bool(removed))
    conversation.memory_note = render_note(note_lines(memory)) if conversation.uses_memory else ""
    if not removed:
        return REPLIES[lang]["nothing_matched" if lines else "nothing_remembered"]
    return REPLIES[lang]["removed"].format(lines=_quoted(removed, lang))


def _show(conversation: Conversation, memory: Memory | None, lang: str) -> str:
    if not conversation.uses_memory:
        return REPLIES[lang]["show_off"]  # this chat uses nothing remembered: it does not list it either
    if memory is not None and memory.stopped_at is not None:
        return REPLIES[lang]["show_stopped"]
    lines = memory.lines if memory else []
    if not lines:
        return REPLIES[lang]["show_empty"]
    shown = note_lines(memory)  # exactly what a chat's agent may see
    listed = "\n".join(f"- {line}" for line in shown)
    if len(shown) < len(lines):
        listed += "\n- (" + REPLIES[lang]["hidden"].format(count=len(lines) - len(shown)) + ")"
    return REPLIES[lang]["show"].format(lines=listed)


def end_user_request(conversation: Conversation, text: str, now: datetime | None = None) -> str | None:
    """The reply to an end user's memory request, having done what it asks; None when the
    message is not one. Works whether or not the conversation uses memory."""
    request = recognise(text)
    if request is None:
        return None
    now = now or timezone.now()
    memory = Memory.objects.filter(end_user=conversation.end_user).first()
    if request.kind == "stop":
        return _stop(conversation, memory, request.lang, now)
    if request.kind == "show":
        return _show(conversation, memory, request.lang)
    return _forget(conversation, request, now)


def end_user_memory_state(end_user) -> dict:
    """What the website chat shows an end user about their own memory: stopped or not."""
    memory = Memory.objects.filter(end_user=end_user).only("stopped_at").first()
    stopped_at = memory.stopped_at if memory else None
    return {"stopped": stopped_at is not None, "stoppedAt": stopped_at.isoformat() if stopped_at else None}
