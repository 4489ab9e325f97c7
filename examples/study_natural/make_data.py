"""How the data of examples/study_natural/ were made: synthetic, seeded, standard library only.

Run from anywhere: it writes beside itself (or into the folder given), byte-identical on every
run:

    python examples/study_natural/make_data.py [FOLDER]

The files are shaped like public pairwise judge data (MT-Bench's human and GPT-4 judgments): two
answers to one question (``answer_a`` of ``model_a``, ``answer_b`` of ``model_b``), a judge
log with one row per judge call and the judge's own words as its verdict, and one expert label
per pair. Nothing here is a real judgment; README.md says what each file and column holds.

The world simulated: every pair has a latent quality difference shared by all readers (the
longer answer is somewhat more often the better one, as in real answers), the registered LLM
judges add a preference for length (on the log ratio of the word counts) and a small preference
for the answer shown first; the experts have no taste for length (a slight one for brevity).
Each judge writes its verdict in its own style; a few calls give an answer no declared rule
reads. The log also holds two control judges (one always names the first answer, one picks at
random) and two probes (prompt variants run on some pairs): the study leaves them out, by
``ignore_raters`` and ``where``.
"""

from __future__ import annotations

import csv
import math
import random
import sys
from pathlib import Path

SEED = 20261203
HERE = Path(__file__).resolve().parent
PAIRS_PER_QUESTION = 6

# question, the direct answer (it names what the question asks about), then details in order
TOPICS: list[tuple[str, str, list[str]]] = [
    (
        "How should I store fresh basil?",
        "Store fresh basil like cut flowers, with the stems in a glass of water on the counter.",
        [
            "Trim the ends first so the stems can drink.",
            "Keep it out of the fridge, because cold air turns the leaves black.",
            "A loose plastic bag over the top keeps the leaves from drying out.",
            "Change the water every two days.",
            "Stored this way it stays fresh for about a week.",
        ],
    ),
    (
        "Why does bread go stale?",
        "Bread goes stale because its starch recrystallises and pushes water out of the crumb.",
        [
            "This happens fastest at fridge temperature, so the fridge makes bread stale sooner.",
            "The crust softens at the same time as the crumb hardens.",
            "Freezing stops the process almost completely.",
            "A few minutes in a hot oven reverses some of it.",
            "Breads with more fat or sugar stay soft for longer.",
        ],
    ),
    (
        "What is a good way to learn touch typing?",
        "A good way to learn touch typing is a short daily practice session on the home row.",
        [
            "Keep your eyes on the screen, never on the keys.",
            "Accuracy comes first; speed follows once the movements are automatic.",
            "Fifteen minutes a day works better than one long session a week.",
            "Free online courses track your errors and repeat the weak letters.",
            "Most people type faster than before within a month.",
        ],
    ),
    (
        "How often should I water a cactus?",
        "Water a cactus only when its soil is completely dry, about every two to three weeks.",
        [
            "In winter most cacti rest and need water once a month at most.",
            "Soak the soil thoroughly and let the pot drain.",
            "Never leave the pot standing in a saucer of water.",
            "Wrinkled skin means thirst, while a soft base usually means rot.",
            "A pot with a drainage hole makes all of this easier.",
        ],
    ),
    (
        "Why is the sky blue?",
        "The sky is blue because air scatters blue sunlight much more strongly than red light.",
        [
            "This is called Rayleigh scattering.",
            "Shorter wavelengths are scattered more, so scattered light from every direction "
            "looks blue.",
            "Violet is scattered even more, but our eyes are less sensitive to it.",
            "At sunset the light crosses more air, so the blue is scattered away and reds remain.",
            "On the Moon there is no air, so its sky is black.",
        ],
    ),
    (
        "How do I remove a coffee stain from a shirt?",
        "To remove a coffee stain from a shirt, rinse it from the back with cold water at once.",
        [
            "Hot water can set the stain, so avoid it at first.",
            "Then rub a little liquid detergent into the spot and leave it for ten minutes.",
            "Wash the shirt as usual and check the spot before drying.",
            "A dryer will fix any stain that is left.",
            "For old stains, an oxygen bleach soak often helps.",
        ],
    ),
    (
        "What does a router do in a home network?",
        "A router in a home network connects your devices to each other and to the internet.",
        [
            "It gives each device a local address.",
            "It forwards traffic between the local network and your provider.",
            "Most home routers also include the wireless access point.",
            "Its firewall blocks unsolicited connections from outside.",
            "Restarting it clears many connection problems.",
        ],
    ),
    (
        "How can I fall asleep faster?",
        "To fall asleep faster, keep a fixed wake time and avoid screens in the last hour.",
        [
            "A cool, dark and quiet bedroom helps.",
            "Caffeine after midday can delay sleep by hours.",
            "If you are still awake after twenty minutes, get up and read until you feel sleepy.",
            "Regular daytime exercise deepens sleep.",
            "Long naps late in the day make the evening harder.",
        ],
    ),
    (
        "What is compound interest?",
        "Compound interest is interest earned on both the original deposit and earlier interest.",
        [
            "Each period the interest is added to the balance.",
            "The next period's interest is then computed on the larger balance.",
            "Over long periods this makes growth much faster than simple interest.",
            "The same effect makes unpaid debt grow quickly.",
            "Starting early matters more than the exact rate.",
        ],
    ),
    (
        "Should I stretch before running?",
        "Stretch before running with a short dynamic warm-up, not long static holds.",
        [
            "Leg swings, skips and a few minutes of easy jogging raise your muscle temperature.",
            "Holding stretches for long periods before a run can reduce power slightly.",
            "Static stretching fits better after the run.",
            "There is little evidence that any stretching prevents injuries on its own.",
            "Increasing your distance gradually matters more.",
        ],
    ),
    (
        "How do vaccines work?",
        "Vaccines work by showing the immune system a harmless piece or copy of a germ.",
        [
            "The body makes antibodies and memory cells against it.",
            "If the real germ arrives later, the response is fast and strong.",
            "Some vaccines need boosters because memory fades.",
            "Widespread vaccination also protects people who cannot be vaccinated.",
            "Side effects such as a sore arm show the immune system responding.",
        ],
    ),
    (
        "What is the difference between weather and climate?",
        "Weather is the state of the air on a given day; climate is its average over decades.",
        [
            "Weather changes hour by hour.",
            "Climate describes what to expect, such as typical summer temperatures.",
            "A cold week does not tell you much about the climate.",
            "Climate scientists usually average over thirty years.",
            "Changes in climate shift the odds of extreme weather.",
        ],
    ),
    (
        "How do I make rice that is not sticky?",
        "For rice that is not sticky, rinse it until the water runs clear before cooking.",
        [
            "Rinsing removes loose surface starch.",
            "Use a little less water than the packet says.",
            "Do not stir the rice while it cooks.",
            "Let it rest with the lid on for ten minutes, then fluff it with a fork.",
            "Long-grain rice such as basmati is naturally less sticky.",
        ],
    ),
    (
        "Why do cats purr?",
        "Cats purr mostly when they are content, but also to soothe themselves when stressed.",
        [
            "Kittens purr while nursing, which helps the mother find them.",
            "The sound comes from rapid twitching of the muscles of the larynx.",
            "Some cats add a higher cry to their purr when they want food.",
            "Purring frequencies may help bones and tissues heal.",
            "A purring cat at the vet may be in pain.",
        ],
    ),
    (
        "How can I reduce my phone's battery drain?",
        "To reduce your phone's battery drain, lower the screen brightness and its timeout.",
        [
            "The screen is usually the largest consumer.",
            "Check which apps use the battery in the background and restrict them.",
            "Turn off location access for apps that do not need it.",
            "Weak signal makes the radio work harder, so battery drains faster in poor coverage.",
            "Keeping the charge between twenty and eighty percent extends battery life.",
        ],
    ),
    (
        "What causes the seasons?",
        "What causes the seasons is the tilt of the Earth's axis, not its distance from the Sun.",
        [
            "When your hemisphere tilts towards the Sun, sunlight hits it more directly.",
            "Days are also longer then, so more energy arrives.",
            "Six months later the same hemisphere tilts away and has winter.",
            "The Earth is actually closest to the Sun in January.",
            "Near the equator the seasons are mild because the tilt matters less there.",
        ],
    ),
    (
        "How do I write a good cover letter?",
        "A good cover letter is short and ties your experience to the job's main requirements.",
        [
            "Open with the role you are applying for and why it interests you.",
            "Give one or two concrete results from past work.",
            "Do not repeat your whole résumé.",
            "Address it to a named person when you can find one.",
            "Keep it to one page and proofread it aloud.",
        ],
    ),
    (
        "Is it safe to eat raw cookie dough?",
        "Raw cookie dough is not fully safe to eat, because of raw flour and raw eggs.",
        [
            "Raw eggs can carry salmonella.",
            "Raw flour has caused outbreaks of harmful bacteria too.",
            "Heat-treated flour and pasteurised eggs remove most of the risk.",
            "Several brands sell dough made to be eaten raw.",
            "Children, pregnant people and older adults should be most careful.",
        ],
    ),
    (
        "What is the best way to memorise vocabulary?",
        "The best way to memorise vocabulary is spaced repetition with active recall.",
        [
            "Test yourself instead of rereading the list.",
            "Review each word just before you would forget it, at growing intervals.",
            "Flashcard apps schedule the reviews for you.",
            "Learn words in example sentences, not alone.",
            "Ten new words a day adds up to thousands in a year.",
        ],
    ),
    (
        "Why do leaves change colour in autumn?",
        "Leaves change colour in autumn because trees stop making green chlorophyll.",
        [
            "As the chlorophyll breaks down, yellow and orange pigments that were there all "
            "along become visible.",
            "Reds come from new pigments made in the leaf in autumn.",
            "Sunny days and cool nights give the brightest reds.",
            "The tree recovers nutrients from the leaves before dropping them.",
            "Evergreens keep their needles and stay green.",
        ],
    ),
    (
        "How do I keep a sourdough starter alive?",
        "Keep a sourdough starter alive by feeding it flour and water on a regular schedule.",
        [
            "At room temperature it needs feeding once or twice a day.",
            "In the fridge a weekly feeding is enough.",
            "Discard part of it before each feeding so it does not grow without end.",
            "A layer of grey liquid on top means it is hungry, not dead.",
            "Pink or orange streaks mean it has spoiled and should be thrown away.",
        ],
    ),
    (
        "What should I look for when buying a used bike?",
        "When buying a used bike, check the frame for cracks and that the size fits you.",
        [
            "Spin the wheels to see that they run true.",
            "Test the brakes and shift through every gear.",
            "Some rust on the chain is cheap to fix; a bent frame is not.",
            "Ask for the purchase receipt to make sure it is not stolen.",
            "Take it for a short ride before paying.",
        ],
    ),
    (
        "How does a refrigerator keep food cold?",
        "A refrigerator keeps food cold by pumping heat from inside the box to the room.",
        [
            "A refrigerant evaporates in coils inside, absorbing heat.",
            "The compressor squeezes the gas, which heats it.",
            "The hot gas releases that heat through the coils at the back.",
            "That is why the back of a fridge feels warm.",
            "A thermostat switches the compressor on and off.",
        ],
    ),
    (
        "Why do onions make you cry?",
        "Onions make you cry because cutting them releases a gas that irritates the eyes.",
        [
            "Cutting breaks cells and mixes enzymes with sulphur compounds.",
            "The gas reacts with the water in your eyes.",
            "Your eyes then produce tears to wash it away.",
            "A sharp knife crushes fewer cells and releases less gas.",
            "Chilling the onion first slows the reaction.",
        ],
    ),
    (
        "How do I start running as a beginner?",
        "As a beginner, start running with short intervals of running and walking.",
        [
            "For example, one minute of running and two of walking, for twenty minutes.",
            "Run three times a week with rest days in between.",
            "Increase the running part a little each week.",
            "Run at a pace where you could still talk.",
            "Good shoes matter more than any other equipment.",
        ],
    ),
    (
        "What is inflation?",
        "Inflation is the general rise of prices over time, so money buys less.",
        [
            "It is usually measured with a basket of typical goods and services.",
            "Central banks often aim for about two percent a year.",
            "Moderate inflation is normal in a growing economy.",
            "High inflation hurts savers and people on fixed incomes.",
            "Central banks raise interest rates to slow it down.",
        ],
    ),
    (
        "How can I make my houseplants grow better?",
        "To make houseplants grow better, give them the right light first of all.",
        [
            "Most houseplants want bright light without direct midday sun.",
            "Overwatering kills more houseplants than underwatering.",
            "Feed them lightly during spring and summer.",
            "Repot when roots come out of the drainage holes.",
            "Wipe dust off the leaves so they can take in light.",
        ],
    ),
    (
        "Why do we have leap years?",
        "We have leap years because a year is about a quarter of a day longer than 365 days.",
        [
            "Adding a day every four years keeps the calendar in step with the seasons.",
            "That slightly overcorrects, so century years skip the leap day.",
            "Century years divisible by 400 keep it, as 2000 did.",
            "Without leap years the seasons would drift through the calendar.",
            "The rule comes from the Gregorian calendar of 1582.",
        ],
    ),
    (
        "How do noise-cancelling headphones work?",
        "Noise-cancelling headphones work by playing sound that is the inverse of outside noise.",
        [
            "Microphones on the ear cups pick up the ambient noise.",
            "A chip produces a wave of the opposite phase.",
            "The two waves cancel each other out at your ear.",
            "This works best for steady low sounds such as engines.",
            "Sudden or high sounds are blocked mostly by the padding.",
        ],
    ),
    (
        "What is a healthy breakfast?",
        "A healthy breakfast combines protein, fibre and some fruit or vegetables.",
        [
            "Oats with yogurt and berries are a simple example.",
            "Eggs with wholegrain toast are another.",
            "Sugary cereals and pastries leave you hungry again soon.",
            "Protein in the morning keeps you full until lunch.",
            "Skipping breakfast is fine for some people if the rest of the day is balanced.",
        ],
    ),
]

# the answering models: (name, opening phrase, fewest and most detail sentences)
MODELS = [
    ("model-concise", "", 0, 1),
    ("model-balanced", "Sure. ", 1, 2),
    ("model-detailed", "Good question. ", 2, 4),
    ("model-thorough", "Here is a complete answer. ", 3, 5),
]

# registered judges: (name, length slope on the log word ratio, first-position bias, style)
JUDGES = [
    ("judge-frontier", 2.5, 0.25, "verdict_brackets"),
    ("judge-open-70b", 3.5, 0.45, "bold"),
    ("judge-open-8b", 4.5, 0.70, "named"),
]
EXPERT_SLOPE = -0.5  # the experts' slope on the log word ratio
EXPERTS = [f"expert-{k:02d}" for k in range(1, 7)]
UNREADABLE = [
    "Both responses are helpful; it depends on what the user needs.",
    "A is clearer but B is more complete, so I cannot pick one.",
    "[[A]] Wait, on reflection [[B]].",
    "",
]


def _logistic(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def _answer(
    rng: random.Random, topic: tuple[str, str, list[str]], model: tuple[str, str, int, int]
) -> str:
    _, direct, details = topic
    _, opening, lo, hi = model
    k = rng.randint(lo, hi)
    chosen = sorted(rng.sample(range(len(details)), k))
    return " ".join([opening + direct, *(details[i] for i in chosen)])


def _words(text: str) -> int:
    return len(text.split())


def _verdict_text(rng: random.Random, style: str, label: str) -> str:
    """What a judge of ``style`` writes for ``label`` (A = the answer shown first, C = tie)."""
    if style == "verdict_brackets":
        reason = rng.choice(
            [
                "Both answers address the question.",
                "Assistant A and Assistant B are both accurate.",
                "One answer gives more practical detail than the other.",
            ]
        )
        return f"{reason} Final verdict: [[{label}]]"
    if label == "C":
        return "[[C]]"
    if style == "bold":
        return f"**{label}**"
    return rng.choice([f"Assistant {label} is better.", f"Response {label}", label])


def _write(path: Path, rows: list[dict[str, str]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def main(out: Path = HERE) -> None:
    """Write pairs.csv, judge_calls.csv and human_labels.csv into ``out``."""
    rng = random.Random(SEED)
    pairs: list[dict[str, str]] = []
    calls: list[dict[str, str]] = []
    labels: list[dict[str, str]] = []
    for q, topic in enumerate(TOPICS, start=1):
        matchups = [(i, j) for i in range(len(MODELS)) for j in range(len(MODELS)) if i != j]
        for i, j in rng.sample(matchups, PAIRS_PER_QUESTION):
            pair_id = f"q{q:02d}-{MODELS[i][0]}-vs-{MODELS[j][0]}"
            a, b = _answer(rng, topic, MODELS[i]), _answer(rng, topic, MODELS[j])
            pairs.append(
                {
                    "pair_id": pair_id,
                    "question_id": f"q{q:02d}",
                    "question": topic[0],
                    "model_a": MODELS[i][0],
                    "model_b": MODELS[j][0],
                    "answer_a": a,
                    "answer_b": b,
                }
            )
            # + when side a is the longer; the latent quality favours the longer answer a little
            ratio = math.log(_words(a) / _words(b))
            quality = rng.gauss(0.3 * math.copysign(1.0, ratio) if ratio else 0.0, 1.0)
            for judge, slope, first_bias, style in JUDGES:
                for shown_first in ("a", "b"):
                    position = first_bias if shown_first == "a" else -first_bias
                    p_a = _logistic(quality + slope * ratio + position)
                    u = rng.random()
                    if u < 0.03:
                        text = rng.choice(UNREADABLE)
                    elif u < 0.05:
                        text = _verdict_text(rng, style, "C")
                    else:
                        side = "a" if rng.random() < p_a else "b"
                        text = _verdict_text(rng, style, "A" if side == shown_first else "B")
                    calls.append(
                        {
                            "pair_id": pair_id,
                            "judge": judge,
                            "judge_type": "llm",
                            "prompt_variant": "standard",
                            "shown_first": shown_first,
                            "judge_output": text,
                        }
                    )
            # two control judges (one always names the first answer, one picks at random) and
            # two probes (the frontier judge told to ignore length, on odd questions; the 70b
            # judge with a rubric asking for concision, on every third question)
            for shown_first in ("a", "b"):
                for control, text in (
                    ("control-always-first", "A"),
                    ("control-random", rng.choice("AB")),
                ):
                    calls.append(
                        {
                            "pair_id": pair_id,
                            "judge": control,
                            "judge_type": "llm",
                            "prompt_variant": "standard",
                            "shown_first": shown_first,
                            "judge_output": text,
                        }
                    )
                for judge, probe, slope, on in (
                    ("judge-frontier", "probe-ignore-length", 0.0, q % 2 == 1),
                    ("judge-open-70b", "probe-concise-rubric", -1.0, q % 3 == 0),
                ):
                    if not on:
                        continue
                    p_a = _logistic(quality + slope * ratio)
                    side = "a" if rng.random() < p_a else "b"
                    label = "A" if side == shown_first else "B"
                    calls.append(
                        {
                            "pair_id": pair_id,
                            "judge": judge,
                            "judge_type": "llm",
                            "prompt_variant": probe,
                            "shown_first": shown_first,
                            "judge_output": f"[[{label}]]" if slope == 0.0 else f"**{label}**",
                        }
                    )
            u = rng.random()
            p_a = _logistic(quality + EXPERT_SLOPE * ratio)
            winner = "tie" if u < 0.1 else ("model_a" if rng.random() < p_a else "model_b")
            labels.append(
                {
                    "pair_id": pair_id,
                    "annotator": EXPERTS[len(labels) % len(EXPERTS)],
                    "annotator_type": "expert",
                    "shown_first": rng.choice("ab"),
                    "winner": winner,
                }
            )
    rng.shuffle(calls)  # a log is in completion order, never grouped by pair
    _write(out / "pairs.csv", pairs)
    _write(out / "judge_calls.csv", calls)
    _write(out / "human_labels.csv", labels)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
