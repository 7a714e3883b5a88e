"""The procedural grammar behind ``data/village_stories.txt``, the corpus of the ``char_lm``
example: short lowercase stories about a village, built from templates and word lists written
for this project. Deterministic for a given seed, so the shipped file can be regenerated:

    python -m pylucid.examples.make_corpus [--stories 700] [--seed 1234] [--out PATH]

Pronouns agree with the character they refer to, places come with their own landmarks and
objects with their own adjectives, so a character-level model has structure to learn beyond
word spellings.
"""
import argparse
import os
import random

CHARACTERS = [
    ("the baker", "she"), ("the miller", "he"), ("the old fisher", "he"), ("the weaver", "she"),
    ("a young shepherd", "he"), ("the teacher", "she"), ("the smith", "he"), ("a little girl", "she"),
    ("the night guard", "he"), ("the potter", "she"), ("a tired traveller", "he"), ("the herbalist", "she"),
]

PLACES = {
    "market": ["the fountain", "the fruit stalls", "the clock tower"],
    "river": ["the stone bridge", "the reeds", "the old boat"],
    "forest": ["the tall pines", "a mossy rock", "the hidden spring"],
    "mill": ["the great wheel", "the flour sacks", "the narrow stairs"],
    "school": ["the blackboard", "the small garden", "the bell"],
    "harbour": ["the fishing nets", "the lighthouse", "the wooden pier"],
    "hill": ["the windy path", "the lone oak", "the sheep fold"],
}

OBJECTS = {
    "a basket of bread": ["warm", "heavy", "fresh"],
    "a lantern": ["bright", "dim", "cracked"],
    "a bundle of wool": ["soft", "grey", "thick"],
    "a letter": ["short", "folded", "secret"],
    "a jar of honey": ["golden", "sticky", "sweet"],
    "a bag of seeds": ["small", "dry", "precious"],
    "a net": ["torn", "wet", "long"],
    "a book of songs": ["old", "worn", "beloved"],
}

TIMES = ["one morning", "at dawn", "late in the evening", "on a rainy day", "in the early spring",
         "after the harvest", "on a cold night", "at noon"]
WEATHER = ["the wind was strong", "the sky was clear", "a light rain was falling", "the air smelled of smoke",
           "the sun was warm", "a thick fog covered the roofs"]
MOODS = ["happy", "worried", "curious", "calm", "tired", "proud"]
GREETINGS = ["good morning", "what a day", "have you seen my cat", "the river is high today",
             "come and rest a while", "i have news from the hill"]
ACTIONS = ["sat down to rest", "sang a quiet song", "counted the coins", "looked for a friend",
           "fixed the broken gate", "fed the hungry birds", "wrote a long letter", "lit a small fire"]
ENDINGS = ["slept well", "told the story to everyone", "made a cup of tea", "closed the door",
           "thought about the day", "planned the next trip"]
GO_VERBS = ["walked to", "ran to", "went down to", "climbed up to", "hurried to"]


def _story(rng):
    name, pron = rng.choice(CHARACTERS)
    place = rng.choice(list(PLACES))
    landmark = rng.choice(PLACES[place])
    obj = rng.choice(list(OBJECTS))
    adj = rng.choice(OBJECTS[obj])
    other, other_pron = rng.choice([c for c in CHARACTERS if c[0] != name])
    lines = [f"{rng.choice(TIMES)}, {name} {rng.choice(GO_VERBS)} the {place}.",
             f"{rng.choice(WEATHER)}, and {pron} felt {rng.choice(MOODS)}."]
    body = [
        f"{pron} carried {obj}, and it was {adj}.",
        f"near {landmark}, {pron} met {other}.",
        f"\"{rng.choice(GREETINGS)},\" said {other}.",
        f"{other_pron} smiled and {rng.choice(ACTIONS)}.",
        f"{pron} {rng.choice(ACTIONS)} by {landmark}.",
    ]
    k = rng.randint(2, len(body))
    lines += body[:k]
    lines.append(f"then {pron} went home and {rng.choice(ENDINGS)}.")
    return " ".join(lines)


def generate(n_stories=700, seed=1234):
    """The corpus text: ``n_stories`` stories, one per line."""
    rng = random.Random(seed)
    return "\n".join(_story(rng) for _ in range(n_stories)) + "\n"


DEFAULT_PATH = os.path.join(os.path.dirname(__file__), "data", "village_stories.txt")


def main(argv=None):
    p = argparse.ArgumentParser(description="regenerate the char_lm corpus")
    p.add_argument("--stories", type=int, default=700)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--out", default=DEFAULT_PATH)
    args = p.parse_args(argv)
    text = generate(args.stories, args.seed)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {len(text)} characters ({args.stories} stories) to {args.out}")


if __name__ == "__main__":
    main()
