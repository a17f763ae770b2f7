#!/usr/bin/env python3
"""Generate the synthetic ``rankgate`` demo dataset.

The dataset is written to ``src/rankgate/data/demo/`` (relative to the
repository root) and consists of:

* ``corpus.jsonl``  - 200 short documents (BEIR style: ``_id``, ``title``, ``text``)
  on five topics (home coffee brewing, trail running, houseplant care,
  personal finance basics, bicycle maintenance) plus a few noise documents
  and one exact duplicate.
* ``queries.jsonl`` - queries with ``tags`` (``topic`` and ``difficulty``).
* ``qrels.txt``     - graded judgments 0-3 in TREC format (``qid 0 docid grade``).
* ``qrels.tsv``     - the same judgments in BEIR format (with a header line).
* ``runs/*.txt``    - three TREC runs (``qid Q0 docid rank score tag``) of clearly
  different quality: ``dense`` (best, simulated), ``bm25`` (medium, a real
  BM25 implementation over the generated text) and ``keyword_first`` (poor,
  and missing one query entirely).
* ``README.md``     - a short description of the dataset.

All text is synthetic and written for this project.  Documents are built
from hand-written fact sentences: every subtopic has six facts, each document
leads with one fact (its "primary" fact) and may add one or two further facts.
Each query targets one or more facts, and graded judgments are derived from
which documents contain those facts:

* 3 - the document leads with a targeted fact (exactly answers),
* 2 - the document contains a targeted fact but leads with something else,
* 1 - the document is on the targeted subtopic without stating the fact
  (about 30% of these are judged 0 instead, as a strict assessor would),
* 0 - judged, same topic but not answering (pooled partly from the top of
  the BM25 ranking, partly at random).

A few queries ask about something the corpus does not cover; they have only
grade-0 judgments.

Everything is deterministic (fixed numpy seeds, sorted output), so running
the script twice produces byte-identical files.  Only the standard library
and numpy are used.

Usage::

    python scripts/make_demo_data.py [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import math
import re
from collections import Counter
from pathlib import Path

import numpy as np

SEED = 20240611
V2_WEAK_TOPIC = "coffee"  # where the dense_v2 candidate regresses
N_RUN_DOCS = 20
# The weak run "fails" on this query (by text, so ids can be reshuffled freely).
WEAK_RUN_MISSING_QUERY = "how fast should I increase weekly mileage"

# ---------------------------------------------------------------------------
# Facts: topic -> subtopic -> six (title, sentence) pairs.
# ---------------------------------------------------------------------------

TOPICS: dict[str, dict[str, list[tuple[str, str]]]] = {
    "coffee": {
        "grind": [
            (
                "Burr grinders versus blade grinders",
                "A burr grinder crushes beans between two abrasive surfaces and produces far more even particles than a spinning blade grinder.",
            ),
            (
                "Matching grind size to the brewer",
                "Use a coarse grind, similar to sea salt, for a French press and a fine grind, close to powdered sugar, for espresso.",
            ),
            (
                "Grind just before you brew",
                "Ground coffee loses much of its aroma within minutes, so grind only what you need right before brewing.",
            ),
            (
                "Dialing in by taste",
                "If a cup tastes sour and thin, try grinding finer; if it tastes harsh and bitter, go a step coarser.",
            ),
            (
                "Keeping the grinder clean",
                "Old coffee oils build up on the burrs and turn rancid, so brush the grinder out every couple of weeks.",
            ),
            (
                "Static and messy grounds",
                "Stirring a single drop of water into the beans before grinding reduces static cling and keeps grounds from scattering.",
            ),
        ],
        "ratio": [
            (
                "A starting brew ratio",
                "A good starting point is about 1 gram of coffee for every 16 grams of water, roughly 60 grams per litre.",
            ),
            (
                "Weigh, don't scoop",
                "Scoops vary with bean density and roast level, so a cheap kitchen scale gives far more repeatable results.",
            ),
            (
                "Weak but not sour",
                "When the brew tastes weak but not sour, add more coffee instead of grinding finer.",
            ),
            (
                "Brewing for a crowd",
                "For a large batch, scale the dose up linearly but expect the brew to take longer, so coarsen the grind slightly.",
            ),
            (
                "Measuring water on the scale",
                "One millilitre of water weighs about one gram, so you can set the whole brewer on a scale and pour to a target weight.",
            ),
            (
                "Letting the grounds bloom",
                "Start with a small pour of about twice the coffee's weight in water and wait thirty seconds so the grounds can bloom.",
            ),
        ],
        "water": [
            (
                "Ideal brewing temperature",
                "Water between 90 and 96 degrees Celsius extracts coffee well, while water straight off the boil can scorch delicate light roasts.",
            ),
            (
                "No thermometer? Wait a bit",
                "Without a thermometer, let freshly boiled water rest for about thirty seconds before pouring.",
            ),
            (
                "Hard water and flat coffee",
                "Very hard tap water leaves limescale in machines and can make coffee taste chalky and flat.",
            ),
            (
                "Filtered tap water",
                "A simple jug filter removes the taste of chlorine and often improves the cup noticeably.",
            ),
            (
                "Why distilled water disappoints",
                "Distilled water lacks the minerals that help extraction and tends to produce a hollow, sour brew.",
            ),
            (
                "Descaling kettles and machines",
                "Descale kettles and machines every one to three months with citric acid or a commercial descaler, depending on how hard your water is.",
            ),
        ],
        "press": [
            (
                "French press step by step",
                "Add coarse grounds, pour in hot water, stir, fit the lid and wait four minutes before pressing the plunger down slowly.",
            ),
            (
                "Less sludge in the cup",
                "To cut down on sediment, skim the crust off the top after steeping and pour gently, leaving the last bit in the pot.",
            ),
            (
                "Decant after pressing",
                "Pour the coffee out after pressing, because it keeps extracting and turns bitter if it sits on the grounds.",
            ),
            (
                "Cleaning the press filter",
                "Unscrew the plunger now and then to wash oils and fine particles out of the mesh filter.",
            ),
            (
                "Cold brew in a press",
                "A French press doubles as a cold brew vessel: steep coarse grounds in cold water in the fridge for 12 to 18 hours, then press.",
            ),
            (
                "Glass or steel press",
                "Double-walled steel presses hold heat much better than glass ones and cannot shatter.",
            ),
        ],
        "pourover": [
            (
                "What pour-over means",
                "Pour-over brewing means pouring water by hand over grounds in a paper cone, which gives you control over flow and contact time.",
            ),
            (
                "Rinse the paper filter",
                "Rinse paper filters with hot water before adding coffee to wash out papery flavours and warm the brewer.",
            ),
            (
                "Why a gooseneck kettle helps",
                "A gooseneck kettle makes it far easier to pour a slow, steady spiral.",
            ),
            (
                "How long a pour-over should take",
                "A single-cup pour-over should finish draining in about three to four minutes; a much longer drawdown usually means the grind is too fine.",
            ),
            (
                "Pouring in pulses",
                "Pouring in several smaller pulses instead of one continuous stream can even out extraction.",
            ),
            (
                "Flat-bottom and cone drippers",
                "Flat-bottomed drippers are more forgiving of uneven pouring than steep cone drippers.",
            ),
        ],
        "espresso": [
            (
                "A basic espresso recipe",
                "A common espresso recipe uses 18 grams of ground coffee to make about 36 grams of liquid in 25 to 30 seconds.",
            ),
            (
                "Tamping consistently",
                "Tamp level and firmly; doing it the same way every time matters more than the exact force.",
            ),
            (
                "Channeling",
                "Water that finds a crack in the puck rushes through it, a fault called channeling that leaves a shot sour and bitter at once.",
            ),
            (
                "Warming up the machine",
                "Most home espresso machines need 15 to 30 minutes to heat the group head fully, so switch on early.",
            ),
            (
                "Steaming silky milk",
                "For silky milk, keep the steam wand tip just below the surface at first to stretch the milk, then lower it to spin and heat.",
            ),
            (
                "Backflushing the group head",
                "Machines with a three-way valve should be backflushed weekly using a blind basket and cleaning powder.",
            ),
        ],
        "storage": [
            (
                "Storing beans at home",
                "Keep beans in an airtight, opaque container away from heat, light and moisture.",
            ),
            (
                "How long beans stay fresh",
                "Most roasted coffee tastes best from about one week to one month after the roast date.",
            ),
            (
                "Freezing coffee beans",
                "Freezing beans in small sealed portions works well for long storage, but never refreeze a portion once it has thawed.",
            ),
            (
                "Why the fridge is a bad idea",
                "The fridge is a poor place for coffee, since beans absorb odours and collect condensation every time the container is opened.",
            ),
            (
                "Degassing after roasting",
                "Freshly roasted beans release carbon dioxide for several days, which is why coffee bags often have one-way valves.",
            ),
            (
                "Buying smaller bags",
                "Buying smaller bags more often is the simplest way to always have fresh coffee on hand.",
            ),
        ],
        "roast": [
            (
                "Light versus dark roast",
                "Light roasts keep more of the bean's origin character and acidity, while dark roasts taste smoky, chocolatey and bitter.",
            ),
            (
                "Does roast level change caffeine?",
                "Dark roasts do not contain noticeably more caffeine than light roasts; measured by weight the difference is small.",
            ),
            (
                "Arabica and robusta",
                "Robusta beans carry roughly twice the caffeine of arabica and have a harsher, more rubbery taste.",
            ),
            (
                "Single origin or blend",
                "Single-origin coffee comes from one farm or region, whereas blends combine beans to keep the flavour consistent all year.",
            ),
            (
                "Washed and natural processing",
                "Washed coffees tend to taste clean and bright, while natural coffees dried inside the fruit taste fruitier and heavier.",
            ),
            (
                "How decaf is made",
                "Beans are decaffeinated before roasting, and the Swiss Water method removes caffeine using only water.",
            ),
        ],
    },
    "trail-running": {
        "shoes": [
            (
                "Trail shoes versus road shoes",
                "Trail shoes have deeper lugs and firmer, more protective soles than road shoes, which helps on loose and rocky ground.",
            ),
            (
                "How deep should lugs be?",
                "Lugs of 5 mm or more grip mud and soft ground well but feel clumsy on hard-packed trails and pavement.",
            ),
            (
                "What a rock plate does",
                "A rock plate is a thin, stiff layer in the midsole that shields the foot from sharp stones.",
            ),
            (
                "Sizing shoes for descents",
                "Leave about a thumb's width of room in the toe box so your toes do not jam into the front on long downhills.",
            ),
            (
                "How long trail shoes last",
                "Most trail shoes last between 500 and 800 kilometres before the cushioning and grip are worn out.",
            ),
            (
                "Waterproof trail shoes",
                "Waterproof membranes keep out puddles but trap sweat, and they dry slowly once water gets in over the top.",
            ),
        ],
        "hills": [
            (
                "Running uphill",
                "On steep climbs, shorten your stride, keep your cadence quick and lean slightly forward from the ankles.",
            ),
            (
                "Power hiking",
                "On very steep grades, power hiking with hands pushing on the thighs is often as fast as running and saves energy.",
            ),
            (
                "Descending with confidence",
                "When running downhill, keep your feet under your hips, take quick light steps and look a few metres ahead.",
            ),
            (
                "Using your arms on rough ground",
                "Holding your arms out wide for balance helps on rocky or rooty descents.",
            ),
            (
                "Sore quads after descents",
                "Long descents cause more muscle soreness than climbs because the quadriceps work eccentrically to brake each step.",
            ),
            (
                "Trekking poles",
                "Trekking poles help on long mountain climbs by taking some of the load off the legs.",
            ),
        ],
        "fuel": [
            (
                "How much to drink on the trail",
                "Drink to thirst on most runs; on hot or long outings, 400 to 800 millilitres per hour is a typical range.",
            ),
            (
                "Electrolytes on long runs",
                "On runs longer than about two hours, replace sodium with electrolyte tablets or salty snacks rather than drinking plain water alone.",
            ),
            (
                "Carbohydrate per hour",
                "For efforts beyond 90 minutes, aim for 30 to 60 grams of carbohydrate per hour from gels, chews or real food.",
            ),
            (
                "Hydration vest or waist belt",
                "A hydration vest spreads weight across the chest and back and carries more than a waist belt.",
            ),
            (
                "Treating stream water",
                "Water from streams should be filtered or treated, even high in remote mountains.",
            ),
            (
                "Practise your fuelling",
                "Practise race-day fuelling during training so your stomach gets used to eating while running.",
            ),
        ],
        "safety": [
            (
                "Tell someone your route",
                "Before heading out alone, tell someone your planned route and when you expect to be back.",
            ),
            (
                "Phone and offline maps",
                "Carry a charged phone with an offline map, since mobile signal often disappears in valleys.",
            ),
            (
                "Meeting wildlife",
                "If you meet a large animal on the trail, stop, give it space and back away slowly instead of running past it.",
            ),
            (
                "Mountain weather",
                "Mountain weather can turn quickly, so pack a light waterproof jacket even on sunny mornings.",
            ),
            (
                "Running after dark",
                "Running trails after dark calls for a headlamp of at least 200 lumens and a spare battery.",
            ),
            (
                "Carry a whistle",
                "A small whistle weighs almost nothing and carries much further than a shout if you need help.",
            ),
        ],
        "injury": [
            (
                "Preventing ankle sprains",
                "Rolled ankles are the most common trail injury, and balance drills and single-leg exercises make the ankle more resilient.",
            ),
            (
                "Treating a mild sprain",
                "For a mild sprain, rest, compress and elevate the ankle, and start running again only when walking is pain-free.",
            ),
            (
                "Cleaning scrapes after a fall",
                "Rinse scrapes from a fall with clean water as soon as possible, because dirt left in a wound raises the risk of infection.",
            ),
            (
                "Outer knee pain",
                "Pain on the outside of the knee on descents is often IT band syndrome, which usually responds to hip strengthening.",
            ),
            (
                "Avoiding blisters",
                "Well-fitting socks made from synthetic or wool fibres help prevent blisters, while cotton socks hold moisture.",
            ),
            (
                "Black toenails",
                "Black toenails usually come from the toes hitting the front of the shoe again and again on descents.",
            ),
        ],
        "training": [
            (
                "Building weekly mileage",
                "Increase weekly distance gradually, by roughly ten percent, and add an easier week every three or four weeks.",
            ),
            (
                "Train by time, not distance",
                "Trail runners often plan training by time on their feet rather than kilometres, because terrain changes pace so much.",
            ),
            (
                "Hill repeats",
                "Hill repeats build leg strength and climbing power: run hard up the slope and recover on the way down.",
            ),
            (
                "Strength work for runners",
                "Two short strength sessions a week, with squats, lunges and calf raises, lower the risk of injury.",
            ),
            (
                "Keep easy runs easy",
                "Most runs should be at a conversational pace, where you could still speak in full sentences.",
            ),
            (
                "Back-to-back long runs",
                "Ultra runners often do long runs on consecutive days to practise running on tired legs.",
            ),
        ],
        "gear": [
            (
                "Layering for the trail",
                "Dress in layers: a wicking base layer, an insulating mid layer when it is cold, and a wind or rain shell.",
            ),
            (
                "Skip the cotton",
                "Avoid cotton clothing, which stays wet and cold; synthetic and merino fabrics dry much faster.",
            ),
            (
                "Gaiters",
                "Short gaiters stop grit and small stones from getting into your shoes.",
            ),
            (
                "Sun protection on ridges",
                "A cap, sunglasses and sunscreen matter on exposed ridges, where the sun and reflected light are intense.",
            ),
            (
                "Preventing chafing",
                "Anti-chafe balm on the inner thighs, underarms and feet prevents painful rubbing on long runs.",
            ),
            (
                "Mandatory race kit",
                "Many mountain races publish a mandatory kit list that typically includes a jacket, an emergency blanket and a whistle.",
            ),
        ],
        "races": [
            (
                "Your first trail race",
                "For a first trail race, pick a shorter distance with modest climbing and walk the steep parts without guilt.",
            ),
            (
                "Trail etiquette",
                "Runners heading uphill generally have the right of way, and you should call out before passing someone.",
            ),
            (
                "Leave no trace",
                "Carry out every wrapper and gel packet, and stay on the marked path to avoid eroding the hillside.",
            ),
            (
                "Moving through aid stations",
                "At aid stations, refill bottles first, grab some food and move on instead of lingering.",
            ),
            (
                "Cut-off times",
                "Ultramarathons usually set cut-off times at checkpoints, and runners who arrive too late are stopped.",
            ),
            (
                "Tapering before a race",
                "Reduce training volume for one to two weeks before a long race so your legs arrive fresh.",
            ),
        ],
    },
    "houseplants": {
        "watering": [
            (
                "Check the soil first",
                "Water when the top two or three centimetres of soil feel dry rather than on a fixed calendar schedule.",
            ),
            (
                "Signs of overwatering",
                "Yellowing lower leaves, mushy stems and soil that never dries out are classic signs of overwatering.",
            ),
            (
                "Signs of underwatering",
                "Crispy brown leaf edges and soil shrinking away from the side of the pot suggest the plant is too dry.",
            ),
            (
                "Bottom watering",
                "Bottom watering, where the pot sits in a tray of water for about twenty minutes, moistens the root ball evenly.",
            ),
            (
                "Watering less in winter",
                "Most houseplants need much less water in winter, when growth slows and light levels drop.",
            ),
            (
                "Sensitive to tap water",
                "Some plants, such as calatheas, get brown tips from the chlorine and fluoride in tap water, and rainwater or filtered water helps.",
            ),
        ],
        "light": [
            (
                "What bright indirect light means",
                "Bright indirect light is a spot near a window where the plant sees a lot of sky but little direct midday sun.",
            ),
            (
                "Plants for low light",
                "Snake plants, ZZ plants and pothos tolerate low light better than most houseplants.",
            ),
            (
                "Leggy growth",
                "Long, stretched stems with wide gaps between the leaves usually mean the plant is not getting enough light.",
            ),
            (
                "Sunburned leaves",
                "Pale or bleached patches that appear after moving a plant into direct sun are usually sunburn.",
            ),
            (
                "Using grow lights",
                "Full-spectrum LED grow lights can make up for a dim room when left on for about 12 hours a day.",
            ),
            (
                "Turning the pot",
                "Give pots a quarter turn every week or two so the plant grows evenly instead of leaning toward the window.",
            ),
        ],
        "soil": [
            (
                "When to repot",
                "Repot when roots circle the pot or poke out of the drainage holes, which usually happens every one to two years.",
            ),
            (
                "Choosing the next pot size",
                "Go up only one pot size, about two to five centimetres wider, since a lot of extra soil stays wet and rots the roots.",
            ),
            (
                "Drainage holes matter",
                "Always use pots with drainage holes, because a layer of gravel at the bottom does not make up for a pot without them.",
            ),
            (
                "Soil for cacti and succulents",
                "Cacti and succulents need a gritty, fast-draining mix with sand, pumice or perlite.",
            ),
            (
                "A chunky mix for aroids",
                "Monsteras and philodendrons like a chunky mix of potting soil, orchid bark and perlite.",
            ),
            (
                "Best season for repotting",
                "Spring is the best time to repot, when the plant is actively growing and recovers quickly.",
            ),
        ],
        "pests": [
            (
                "Fungus gnats",
                "Fungus gnats breed in constantly wet soil, so let the top layer dry out and use yellow sticky traps to catch the adults.",
            ),
            (
                "Spider mites",
                "Fine webbing and tiny pale speckles on the leaves point to spider mites, which thrive in dry air.",
            ),
            (
                "Mealybugs",
                "Mealybugs look like small tufts of white cotton; dab them off with a cotton swab dipped in rubbing alcohol.",
            ),
            (
                "Quarantine new plants",
                "Keep a new plant away from the others for a couple of weeks to make sure it is not carrying pests.",
            ),
            (
                "Insecticidal soap and neem oil",
                "Insecticidal soap or neem oil sprays control many soft-bodied pests if you repeat them weekly for several weeks.",
            ),
            (
                "Scale insects",
                "Scale insects show up as small brown bumps on stems and the undersides of leaves and can be scraped off.",
            ),
        ],
        "feeding": [
            (
                "When to fertilize",
                "Fertilize houseplants during spring and summer growth, and stop or cut back in autumn and winter.",
            ),
            (
                "Dilute the fertilizer",
                "Use liquid fertilizer at half the strength printed on the label, because overfeeding burns the roots.",
            ),
            (
                "White crust on the soil",
                "A white crust on the soil surface or the pot rim is built-up fertilizer salt; flush the pot with plenty of water.",
            ),
            (
                "Reading NPK numbers",
                "The three numbers on a fertilizer label give the percentages of nitrogen, phosphorus and potassium.",
            ),
            (
                "Slow-release pellets",
                "Slow-release pellets mixed into the soil feed a plant gradually for several months.",
            ),
            (
                "Wait after repotting",
                "Fresh potting mix already contains nutrients, so wait a month or two before fertilizing a newly repotted plant.",
            ),
        ],
        "humidity": [
            (
                "Raising humidity",
                "Grouping plants together or running a humidifier raises humidity far more effectively than misting.",
            ),
            (
                "The misting myth",
                "Misting raises humidity for only a few minutes and can encourage fungal spots on some leaves.",
            ),
            (
                "Drafts and radiators",
                "Keep plants away from cold drafts, radiators and air-conditioning vents, which can cause sudden leaf drop.",
            ),
            (
                "Temperatures for tropical plants",
                "Most tropical houseplants are happiest between 18 and 27 degrees Celsius.",
            ),
            (
                "Pebble trays",
                "A pebble tray filled with water under the pot adds a little local humidity without waterlogging the roots.",
            ),
            (
                "Plants for the bathroom",
                "Ferns and other humidity lovers often thrive in a bright bathroom.",
            ),
        ],
        "propagation": [
            (
                "Rooting cuttings in water",
                "Pothos and philodendron stem cuttings root easily in a glass of water as long as each cutting has a node.",
            ),
            (
                "What a node is",
                "A node is the small bump on a stem where leaves and roots grow from, and a cutting without one will not root.",
            ),
            (
                "Propagating succulent leaves",
                "Succulent leaves can be twisted off, left to callus for a few days and laid on dry soil to sprout.",
            ),
            (
                "Dividing clumping plants",
                "Plants that grow in clumps, like peace lilies and snake plants, can be divided at the roots while repotting.",
            ),
            (
                "Moving cuttings from water to soil",
                "Move water-rooted cuttings into soil once the roots are a few centimetres long, and keep the soil moist at first.",
            ),
            (
                "Rooting hormone",
                "Rooting hormone powder speeds up rooting of woody cuttings but is rarely needed for easy plants.",
            ),
        ],
        "problems": [
            (
                "Brown leaf tips",
                "Brown leaf tips usually come from low humidity, irregular watering or a buildup of salts in the soil.",
            ),
            (
                "Leaf drop after a move",
                "Many plants, the fiddle-leaf fig most famously, drop leaves after being moved because of the sudden change in light.",
            ),
            (
                "Root rot",
                "Root rot turns roots brown and mushy; trim away the damaged roots and repot into fresh, dry mix.",
            ),
            (
                "Plants that are toxic to pets",
                "Pothos, philodendron, monstera and dieffenbachia are toxic to cats and dogs if chewed.",
            ),
            (
                "Pet-safe plants",
                "Spider plants, calatheas and Boston ferns are generally considered safe to keep around pets.",
            ),
            (
                "Dusting the leaves",
                "Wipe dusty leaves with a damp cloth so they can take in light properly.",
            ),
        ],
    },
    "personal-finance": {
        "budget": [
            (
                "The 50/30/20 rule",
                "The 50/30/20 rule splits take-home pay into 50% for needs, 30% for wants and 20% for savings and debt repayment.",
            ),
            (
                "Track spending first",
                "Track every expense for a month before building a budget, since most people underestimate small daily purchases.",
            ),
            (
                "Zero-based budgeting",
                "In a zero-based budget every unit of income is given a job, so income minus planned spending comes to zero.",
            ),
            (
                "Planning for irregular bills",
                "Divide yearly bills such as insurance or car repairs by twelve and set that amount aside each month.",
            ),
            (
                "Pay yourself first",
                "Pay yourself first by moving money into savings automatically on payday, before you have a chance to spend it.",
            ),
            (
                "The envelope method",
                "The envelope method puts cash for each spending category in its own envelope, and when an envelope is empty that spending stops.",
            ),
        ],
        "emergency": [
            (
                "How big an emergency fund should be",
                "An emergency fund usually covers three to six months of essential expenses.",
            ),
            (
                "Where to keep emergency savings",
                "Keep the emergency fund in a separate, easily accessible savings account rather than invested in stocks.",
            ),
            (
                "Start with a small target",
                "Start with a small target, such as one month of rent, and then build toward the full amount.",
            ),
            (
                "What counts as an emergency",
                "Losing a job, urgent medical bills and essential car repairs are emergencies; holidays and sales are not.",
            ),
            (
                "Refilling the fund",
                "After dipping into the fund, pause other goals and rebuild it before anything else.",
            ),
            (
                "Irregular income",
                "Freelancers and others with irregular income should aim for the larger end of the usual range.",
            ),
        ],
        "debt": [
            (
                "The avalanche method",
                "The avalanche method pays the minimum on every debt and puts extra money toward the highest interest rate first, which saves the most interest.",
            ),
            (
                "The snowball method",
                "The snowball method clears the smallest balance first, giving quick wins that keep people motivated.",
            ),
            (
                "The minimum payment trap",
                "Paying only the minimum on a credit card can stretch repayment over many years and multiply the interest paid.",
            ),
            (
                "Balance transfer cards",
                "A zero-interest balance transfer can help, but watch the transfer fee and the rate that applies once the promotion ends.",
            ),
            (
                "Debt consolidation loans",
                "A consolidation loan combines several debts into one monthly payment, ideally at a lower interest rate.",
            ),
            (
                "Cheap debt and expensive debt",
                "Low-interest borrowing that builds value, like some mortgages, is very different from high-interest consumer debt.",
            ),
        ],
        "credit": [
            (
                "What drives a credit score",
                "Payment history and credit utilisation are the biggest factors in most credit scores.",
            ),
            (
                "Credit utilisation",
                "Keeping card balances below about 30% of the credit limit, and lower when possible, helps your score.",
            ),
            (
                "Checking your credit report",
                "Check your credit report at least once a year for errors or accounts you do not recognise.",
            ),
            (
                "Closing old accounts",
                "Closing an old credit card can lower your score by shortening your credit history and reducing available credit.",
            ),
            (
                "Hard inquiries",
                "Applying for several loans or cards in a short period triggers hard inquiries that temporarily lower your score.",
            ),
            (
                "Building credit from nothing",
                "A secured card or a small credit-builder loan paid on time helps build a credit history from scratch.",
            ),
        ],
        "invest": [
            (
                "Why index funds",
                "Low-cost index funds spread money across hundreds of companies and often beat actively managed funds after fees.",
            ),
            (
                "Compound growth",
                "Compound growth means returns earn returns of their own, which is why starting early matters so much.",
            ),
            (
                "Fees add up",
                "A 1% annual fee sounds small but can eat a large share of your returns over several decades.",
            ),
            (
                "Diversification",
                "Spreading investments across asset classes and countries limits the damage any single holding can do.",
            ),
            (
                "Match investments to your time horizon",
                "Money you will need within a few years should not be in stocks, which can fall sharply in the short term.",
            ),
            (
                "Investing a fixed amount monthly",
                "Investing a fixed amount every month, known as dollar-cost averaging, removes the temptation to time the market.",
            ),
        ],
        "retire": [
            (
                "Take the employer match",
                "If your employer matches retirement contributions, contribute at least enough to get the full match, because it is free money.",
            ),
            (
                "Tax-advantaged accounts",
                "Retirement accounts give a tax advantage either on contributions now or on withdrawals later.",
            ),
            (
                "How much to save for retirement",
                "A common guideline is to save 10 to 15% of gross income for retirement.",
            ),
            (
                "Target-date funds",
                "Target-date funds automatically shift from stocks toward bonds as the chosen retirement year approaches.",
            ),
            (
                "Early withdrawals",
                "Taking money out of retirement accounts early often triggers penalties as well as taxes.",
            ),
            (
                "Starting late",
                "Starting late means saving a higher share of income, working a little longer, or both.",
            ),
        ],
        "saving": [
            (
                "High-yield savings accounts",
                "High-yield savings accounts, often offered by online banks, pay much more interest than standard accounts.",
            ),
            (
                "Sinking funds",
                "Sinking funds are small savings pots for planned purchases such as a new laptop or a holiday.",
            ),
            (
                "Automate your saving",
                "Automatic transfers make saving the default rather than a decision you have to make every month.",
            ),
            (
                "Watch for bank fees",
                "Review statements for monthly maintenance, overdraft and ATM fees, and switch banks if they add up.",
            ),
            (
                "Inflation and cash",
                "Cash held for many years loses purchasing power to inflation, even in a savings account.",
            ),
            (
                "Fixed-term deposits",
                "Fixed-term deposits pay a higher rate in exchange for locking the money away for a set period.",
            ),
        ],
        "insurance": [
            (
                "Term life insurance",
                "Term life insurance is usually much cheaper than whole life cover and protects the years when dependants rely on your income.",
            ),
            (
                "Choosing a deductible",
                "A higher deductible lowers premiums, but only makes sense if you have savings to cover it.",
            ),
            (
                "Renters insurance",
                "Renters insurance covers your belongings and personal liability and is usually inexpensive.",
            ),
            (
                "Keeping tax records",
                "Keep receipts and tax records for several years in case the tax authority has questions.",
            ),
            (
                "Big tax refunds",
                "A large tax refund means you overpaid during the year, and adjusting your withholding puts that money in your pocket sooner.",
            ),
            (
                "Disability insurance",
                "Disability insurance replaces part of your income if illness or injury stops you from working.",
            ),
        ],
    },
    "bike-maintenance": {
        "tires": [
            (
                "Fixing a flat tire",
                "To fix a flat, remove the wheel, lever the tire off the rim, find the hole in the tube and patch or replace it.",
            ),
            (
                "Find what caused the puncture",
                "Before fitting a new tube, run your fingers carefully around the inside of the tire to find the thorn or glass that caused the puncture.",
            ),
            (
                "Tire pressure",
                "Check tire pressure weekly: road tires often run 80 to 100 psi and mountain bike tires 25 to 35 psi, depending on rider weight.",
            ),
            (
                "Tubeless tires",
                "Tubeless tires hold liquid sealant that plugs small punctures automatically, which is why many mountain bikers use them.",
            ),
            (
                "When tires are worn out",
                "Replace a tire when the tread is flat and squared off or when cuts or casing threads start to show.",
            ),
            (
                "Pinch flats",
                "Two small parallel slits in the tube, known as a snakebite, come from hitting an edge with too little pressure.",
            ),
        ],
        "chain": [
            (
                "Cleaning the chain",
                "Clean the chain with degreaser and a brush or chain-cleaning tool, then let it dry before lubricating.",
            ),
            (
                "Lubricating the chain",
                "Put one drop of lube on each roller, spin the cranks, then wipe off the excess so it does not attract dirt.",
            ),
            (
                "Wet or dry lube",
                "Wet lube lasts longer in rain and mud, while dry lube stays cleaner in dusty summer conditions.",
            ),
            (
                "Checking chain wear",
                "A chain checker tool shows stretch; replace the chain at about 0.5 to 0.75% wear to protect the cassette and chainrings.",
            ),
            (
                "A squeaky chain",
                "A squeaking or creaking drivetrain usually means the chain is dry and needs lube.",
            ),
            (
                "Quick links",
                "Many modern chains are joined with a quick link that special pliers can open for cleaning.",
            ),
        ],
        "brakes": [
            (
                "Replacing rim brake pads",
                "Replace rim brake pads once the grooves are worn away, and align them so they hit the rim rather than the tire.",
            ),
            (
                "Squealing disc brakes",
                "Squealing disc brakes are often caused by contaminated pads or rotors, so clean the rotor with isopropyl alcohol.",
            ),
            (
                "Spongy hydraulic brakes",
                "A soft, spongy lever on hydraulic brakes usually means air in the system, which a bleed will fix.",
            ),
            (
                "Adjusting brake cable tension",
                "If the brake lever pulls too close to the handlebar, tighten the cable with the barrel adjuster.",
            ),
            (
                "Bedding in new pads",
                "New disc pads should be bedded in with a series of firm stops from moderate speed.",
            ),
            (
                "A rubbing rotor",
                "A rotor that rubs can often be fixed by loosening the caliper bolts, squeezing the brake lever and tightening them again.",
            ),
        ],
        "gears": [
            (
                "Indexing the gears",
                "If the chain hesitates or skips between gears, adjust cable tension with the barrel adjuster a quarter turn at a time.",
            ),
            (
                "Derailleur limit screws",
                "The limit screws stop the derailleur from pushing the chain into the spokes or off the smallest cog.",
            ),
            (
                "A bent derailleur hanger",
                "A bent derailleur hanger, often the result of a crash, causes poor shifting no matter how the cable is adjusted.",
            ),
            (
                "Worn shift cables",
                "Frayed or sticky shift cables make shifting sluggish and should be replaced together with the housing.",
            ),
            (
                "Avoid cross-chaining",
                "Avoid combining the big chainring with the largest rear cog, which bends the chain at an extreme angle.",
            ),
            (
                "Electronic shifting",
                "Electronic groupsets need their batteries charged but rarely need any cable adjustment.",
            ),
        ],
        "wheels": [
            (
                "Truing a wheel",
                "A wobbly wheel can be trued by tightening and loosening spokes a little at a time with a spoke key.",
            ),
            (
                "Broken spokes",
                "Riding on a broken spoke can bend the rim, so replace it soon.",
            ),
            (
                "Hub bearings",
                "If a wheel feels rough or has side-to-side play, the hub bearings need adjustment or replacement.",
            ),
            (
                "Closing a quick-release",
                "Close a quick-release lever firmly enough that it leaves an imprint on your palm, rather than spinning it like a wingnut.",
            ),
            (
                "Thru-axles",
                "Thru-axles thread into the frame or fork and hold the wheel more stiffly than quick-release skewers.",
            ),
            (
                "Worn rims",
                "On wheels with rim brakes, a concave braking surface or a worn wear indicator means the rim must be replaced.",
            ),
        ],
        "routine": [
            (
                "The ABC pre-ride check",
                "Before each ride, do an ABC check: air in the tires, brakes working, and chain and cranks running smoothly.",
            ),
            (
                "Washing the bike",
                "Wash the bike with a bucket, a soft brush and mild soap rather than a pressure washer, which forces water into the bearings.",
            ),
            (
                "Using a torque wrench",
                "Use a torque wrench on carbon parts, since overtightened bolts can crack them.",
            ),
            (
                "How often to service",
                "Have the bike fully serviced once or twice a year, or more often if you ride in wet or muddy conditions.",
            ),
            (
                "After a wet ride",
                "After a wet ride, dry the bike and re-lube the chain to stop rust forming overnight.",
            ),
            (
                "A basic home tool kit",
                "A basic home kit includes hex keys, tire levers, a floor pump with a gauge and a chain tool.",
            ),
        ],
        "fit": [
            (
                "Setting saddle height",
                "At the correct saddle height your knee is still slightly bent at the bottom of the pedal stroke.",
            ),
            (
                "Saddle fore-aft position",
                "Slide the saddle forward or back on its rails so your knee sits roughly over the pedal axle.",
            ),
            (
                "Handlebar reach",
                "If your neck or hands ache, the handlebars may be too low or too far away, and a shorter stem can help.",
            ),
            (
                "Clipless or flat pedals",
                "Clipless pedals lock the shoe to the pedal for more efficient pedalling, while flat pedals are easier to step off.",
            ),
            (
                "A loose headset",
                "A knocking feeling when you brake hard with the front brake usually means the headset is loose.",
            ),
            (
                "Bottom bracket creaks",
                "A creak on every pedal stroke often comes from the bottom bracket, the pedals or a loose chainring bolt.",
            ),
        ],
        "ebike": [
            (
                "E-bike battery care",
                "Store an e-bike battery partly charged, around 30 to 60%, somewhere cool and dry, and avoid leaving it completely empty.",
            ),
            (
                "E-bikes wear parts faster",
                "E-bikes wear out chains and brake pads faster because of the extra weight and motor torque.",
            ),
            (
                "Storing a bike for winter",
                "For winter storage, clean the bike, lube the chain and either hang it up or keep the tires inflated.",
            ),
            (
                "Road salt and rust",
                "Road salt corrodes chains and bolts quickly, so rinse the bike after every winter ride.",
            ),
            (
                "Keeping the bike indoors",
                "Keeping a bike indoors protects it from rain and theft and stops the cables and chain from rusting.",
            ),
            (
                "Locking up",
                "Lock the frame and one wheel to a solid object with a sturdy U-lock.",
            ),
        ],
    },
}

# Off-topic or look-alike documents ("noise"): no query targets them.
NOISE_DOCS: list[tuple[str, str]] = [
    (
        "Steeping loose-leaf tea",
        "Green tea tastes best steeped at about 80 degrees Celsius for two to three minutes, while black tea wants hotter water and a little longer.",
    ),
    (
        "Breaking in walking boots",
        "New leather walking boots need a few weeks of short walks to soften before a long hike.",
    ),
    (
        "Community garden meeting",
        "The community garden committee meets on the first Tuesday of every month, and new members can sign up at the library desk.",
    ),
    (
        "Rotating car tires",
        "Rotating car tires every 8,000 to 10,000 kilometres helps them wear evenly and last longer.",
    ),
]

# The document (topic, subtopic, index within subtopic) that gets an exact
# duplicate in the corpus; duplicates are common in real collections and
# produce genuine score ties in the lexical run.
DUPLICATED_DOC = ("bike-maintenance", "chain", 0)

# ---------------------------------------------------------------------------
# Queries: (text, difficulty, targets). A target is (subtopic, fact, max_grade).
# An empty target list means the corpus does not answer the query.
# ---------------------------------------------------------------------------

QUERIES: dict[str, list[tuple[str, str, list[tuple[str, int, int]]]]] = {
    "coffee": [
        ("burr grinder vs blade grinder", "easy", [("grind", 0, 3)]),
        (
            "coffee tastes sour what should I change",
            "medium",
            [("grind", 3, 3), ("water", 4, 2), ("espresso", 2, 2)],
        ),
        ("coffee to water ratio in grams", "easy", [("ratio", 0, 3)]),
        (
            "right proportion of beans to liquid for a balanced cup",
            "hard",
            [("ratio", 0, 3)],
        ),
        (
            "best water temperature for brewing coffee",
            "medium",
            [("water", 0, 3), ("water", 1, 3)],
        ),
        (
            "white crusty deposits building up inside my kettle",
            "hard",
            [("water", 5, 3), ("water", 2, 3)],
        ),
        ("how to reduce sediment in french press coffee", "easy", [("press", 1, 3)]),
        ("why does my hand drip take forever to finish", "hard", [("pourover", 3, 3)]),
        ("espresso shot recipe dose and time", "medium", [("espresso", 0, 3)]),
        (
            "shot tastes acidic and harsh at the same time, uneven flow",
            "hard",
            [("espresso", 2, 3)],
        ),
        (
            "should I store coffee beans in the freezer",
            "easy",
            [("storage", 2, 3), ("storage", 3, 2)],
        ),
        ("does a darker bean give more of a buzz", "hard", [("roast", 1, 3)]),
        ("how to roast green coffee beans in a popcorn popper", "medium", []),
    ],
    "trail-running": [
        ("trail running shoes vs road shoes", "easy", [("shoes", 0, 3)]),
        (
            "how much room in the toe box for downhill running",
            "medium",
            [("shoes", 3, 3), ("injury", 5, 2)],
        ),
        (
            "nails turning purple after hilly events",
            "hard",
            [("injury", 5, 3), ("shoes", 3, 2)],
        ),
        (
            "how to run uphill on steep climbs",
            "easy",
            [("hills", 0, 3), ("hills", 1, 2)],
        ),
        (
            "why are my thighs wrecked after coming down a mountain",
            "hard",
            [("hills", 4, 3)],
        ),
        (
            "how many grams of carbohydrate per hour on long runs",
            "easy",
            [("fuel", 2, 3)],
        ),
        (
            "replacing what I lose in sweat during all-day outings",
            "hard",
            [("fuel", 1, 3), ("fuel", 0, 2)],
        ),
        ("what headlamp for running trails at night", "medium", [("safety", 4, 3)]),
        ("staying safe if I bump into a bear", "hard", [("safety", 2, 3)]),
        (
            "how to prevent ankle sprains on trails",
            "easy",
            [("injury", 0, 3), ("injury", 1, 2)],
        ),
        ("how fast should I increase weekly mileage", "medium", [("training", 0, 3)]),
        (
            "what to wear so I don't end up soaked and freezing",
            "hard",
            [("gear", 1, 3), ("gear", 0, 3)],
        ),
        ("who has the right of way when passing on a trail", "easy", [("races", 1, 3)]),
    ],
    "houseplants": [
        ("signs of overwatering houseplants", "easy", [("watering", 1, 3)]),
        (
            "how often should I water my plants",
            "medium",
            [("watering", 0, 3), ("watering", 4, 2)],
        ),
        (
            "vine getting long and spindly with sparse foliage",
            "hard",
            [("light", 2, 3)],
        ),
        ("best low light houseplants", "easy", [("light", 1, 3)]),
        (
            "when to repot a plant and what size pot to use",
            "medium",
            [("soil", 0, 3), ("soil", 1, 3)],
        ),
        ("tiny flies buzzing around my indoor greenery", "hard", [("pests", 0, 3)]),
        ("white fluffy bugs on my plant", "medium", [("pests", 2, 3)]),
        ("how to get rid of spider mites", "easy", [("pests", 1, 3), ("pests", 4, 2)]),
        (
            "how much plant food to give and at what time of year",
            "hard",
            [("feeding", 0, 3), ("feeding", 1, 3)],
        ),
        (
            "does misting increase humidity",
            "easy",
            [("humidity", 1, 3), ("humidity", 0, 2)],
        ),
        ("is my monstera dangerous for my cat to nibble", "hard", [("problems", 3, 3)]),
        (
            "why are the tips of my leaves turning brown",
            "medium",
            [("problems", 0, 3), ("watering", 5, 2)],
        ),
        ("how to get an orchid to bloom again", "medium", []),
    ],
    "personal-finance": [
        ("what is the 50/30/20 budget rule", "easy", [("budget", 0, 3)]),
        (
            "how much cash cushion do I need in case I get laid off",
            "hard",
            [("emergency", 0, 3), ("emergency", 3, 2)],
        ),
        (
            "pay off highest interest debt first or smallest balance",
            "medium",
            [("debt", 0, 3), ("debt", 1, 3)],
        ),
        (
            "switching what I owe on plastic to another issuer with no interest for a year",
            "hard",
            [("debt", 3, 3)],
        ),
        ("what affects my credit score", "easy", [("credit", 0, 3), ("credit", 1, 2)]),
        (
            "will shutting down my oldest card hurt my rating",
            "hard",
            [("credit", 3, 3)],
        ),
        ("why are index funds recommended", "medium", [("invest", 0, 3)]),
        ("why begin putting money away in your twenties", "hard", [("invest", 1, 3)]),
        ("employer match on retirement contributions", "easy", [("retire", 0, 3)]),
        ("how much of my income should go to retirement", "medium", [("retire", 2, 3)]),
        (
            "where to park savings to earn more than a regular bank pays",
            "hard",
            [("saving", 0, 3)],
        ),
        (
            "is term life insurance better than whole life",
            "easy",
            [("insurance", 0, 3)],
        ),
    ],
    "bike-maintenance": [
        ("how to fix a flat tire", "easy", [("tires", 0, 3), ("tires", 1, 2)]),
        ("what tire pressure should I run", "medium", [("tires", 2, 3)]),
        ("two little slits side by side in my inner tube", "hard", [("tires", 5, 3)]),
        (
            "how to clean and lube a bike chain",
            "easy",
            [("chain", 0, 3), ("chain", 1, 3)],
        ),
        (
            "drivetrain chirping noise on every pedal turn",
            "hard",
            [("chain", 4, 3), ("fit", 5, 2)],
        ),
        ("disc brakes squealing", "easy", [("brakes", 1, 3)]),
        (
            "lever feels mushy and nearly touches the grip",
            "hard",
            [("brakes", 2, 3), ("brakes", 3, 2)],
        ),
        (
            "gears skipping and not shifting cleanly",
            "medium",
            [("gears", 0, 3), ("gears", 2, 2)],
        ),
        (
            "rim swings left and right when spun in the stand",
            "hard",
            [("wheels", 0, 3)],
        ),
        (
            "how to store an e-bike battery over winter",
            "medium",
            [("ebike", 0, 3), ("ebike", 2, 1)],
        ),
        ("should I blast my bicycle with a jet washer", "hard", [("routine", 1, 3)]),
        ("how to convert a bike to a single speed", "medium", []),
    ],
}

# Subtopics whose documents are judged (grade 0) for the unanswerable queries.
UNANSWERABLE_POOL = {
    "how to roast green coffee beans in a popcorn popper": ["roast", "storage"],
    "how to get an orchid to bloom again": ["feeding", "light"],
    "how to convert a bike to a single speed": ["gears", "chain"],
}

# ---------------------------------------------------------------------------
# Text processing and BM25
# ---------------------------------------------------------------------------

STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "can",
        "do",
        "does",
        "for",
        "from",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "my",
        "of",
        "on",
        "or",
        "so",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "too",
        "up",
        "was",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "why",
        "will",
        "with",
        "you",
        "your",
    ]
)
TOKEN_RE = re.compile(r"[a-z0-9]+")


def tokenize(text: str) -> list[str]:
    """Lower-case, split on non-alphanumerics, drop stopwords, strip plural -s."""
    out = []
    for tok in TOKEN_RE.findall(text.lower()):
        if tok in STOPWORDS:
            continue
        if len(tok) > 4 and tok.endswith("ies"):
            tok = tok[:-3] + "y"
        elif (
            len(tok) > 3
            and tok.endswith("s")
            and not tok.endswith(("ss", "us", "os", "is"))
        ):
            tok = tok[:-1]
        out.append(tok)
    return out


class BM25:
    """Plain Okapi BM25 with the Lucene-style (always positive) IDF."""

    def __init__(self, docs: dict[str, str], k1: float = 1.2, b: float = 0.75):
        self.k1, self.b = k1, b
        self.tf = {did: Counter(tokenize(text)) for did, text in docs.items()}
        self.len = {did: sum(c.values()) for did, c in self.tf.items()}
        self.avgdl = sum(self.len.values()) / len(self.len)
        df: Counter[str] = Counter()
        for c in self.tf.values():
            df.update(c.keys())
        n = len(docs)
        self.idf = {t: math.log(1.0 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}

    def term_score(self, term: str, did: str) -> float:
        f = self.tf[did].get(term, 0)
        if not f:
            return 0.0
        norm = f + self.k1 * (1 - self.b + self.b * self.len[did] / self.avgdl)
        return self.idf[term] * f * (self.k1 + 1) / norm

    def score(self, query: str, did: str) -> float:
        return sum(self.term_score(term, did) for term in tokenize(query))

    def score_prf(
        self, query: str, fb_docs: int = 5, fb_terms: int = 20, fb_weight: float = 0.5
    ) -> dict[str, float]:
        """BM25 plus RM3-style pseudo-relevance feedback.

        The top ``fb_docs`` documents of a first BM25 pass contribute their
        most frequent (idf-weighted) terms as extra, down-weighted query terms.
        """
        first = {did: self.score(query, did) for did in self.tf}
        top = sorted(
            (did for did in first if first[did] > 0), key=lambda did: (-first[did], did)
        )[:fb_docs]
        qterms = set(tokenize(query))
        weights: Counter[str] = Counter()
        for did in top:
            for term, f in self.tf[did].items():
                if term not in qterms:
                    weights[term] += f / self.len[did] * self.idf[term]
        expansion = sorted(weights.items(), key=lambda kv: (-kv[1], kv[0]))[:fb_terms]
        if not expansion:
            return first
        w_max = expansion[0][1]
        return {
            did: first[did]
            + fb_weight * sum(w / w_max * self.term_score(t, did) for t, w in expansion)
            for did in self.tf
        }


# ---------------------------------------------------------------------------
# Building blocks
# ---------------------------------------------------------------------------


def build_corpus(rng: np.random.Generator):
    """Return a list of doc records (before id assignment), in a fixed order."""
    docs = []
    for topic, subtopics in TOPICS.items():
        subs = list(subtopics)
        # 39 documents per topic: one subtopic (chosen at random) gets 4, the rest 5.
        short = subs[int(rng.integers(len(subs)))]
        for sub in subs:
            facts = subtopics[sub]
            n_docs = 4 if sub == short else 5
            for k in range(n_docs):
                n_sent = int(rng.choice([1, 2, 3], p=[0.25, 0.5, 0.25]))
                others = [i for i in range(len(facts)) if i != k]
                extra = [
                    int(x) for x in rng.choice(others, size=n_sent - 1, replace=False)
                ]
                sents = [(sub, k)] + [(sub, i) for i in extra]
                # Occasionally a document strays into a neighbouring subtopic.
                if n_sent < 3 and rng.random() < 0.12:
                    other_sub = subs[int(rng.integers(len(subs)))]
                    if other_sub != sub:
                        sents.append((other_sub, int(rng.integers(len(facts)))))
                docs.append(
                    {
                        "topic": topic,
                        "sub": sub,
                        "k": k,
                        "facts": sents,
                        "title": facts[k][0],
                        "text": " ".join(subtopics[s][i][1] for s, i in sents),
                    }
                )
    for title, text in NOISE_DOCS:
        docs.append(
            {
                "topic": "noise",
                "sub": None,
                "k": None,
                "facts": [],
                "title": title,
                "text": text,
            }
        )
    topic, sub, k = DUPLICATED_DOC
    original = next(
        d for d in docs if (d["topic"], d["sub"], d["k"]) == (topic, sub, k)
    )
    docs.append(dict(original))
    return docs


def judge(query_text, topic, targets, docs, bm25_rank, rng):
    """Return {docid: grade} for one query."""
    qrels: dict[str, int] = {}
    target_subs = {s for s, _, g in targets if g == 3}
    for d in docs:
        if d["topic"] != topic:
            continue
        grade = None
        for s, f, g in targets:
            if d["facts"][0] == (s, f):
                cand = g
            elif (s, f) in d["facts"]:
                cand = max(g - 1, 1)
            else:
                continue
            grade = cand if grade is None else max(grade, cand)
        if grade is None and d["sub"] in target_subs:
            grade = 1 if rng.random() < 0.7 else 0
        if grade is not None:
            qrels[d["id"]] = grade
    # Grade-0 judgments: pooled from the top of the lexical ranking plus random
    # same-topic documents, as assessors would see them.
    n_zero = int(rng.integers(3, 11))
    have_zero = sum(1 for g in qrels.values() if g == 0)
    need = max(0, n_zero - have_zero)
    if not targets:
        pool_subs = UNANSWERABLE_POOL[query_text]
        same = [d["id"] for d in docs if d["topic"] == topic and d["sub"] in pool_subs]
        take = rng.choice(same, size=min(len(same), n_zero), replace=False)
        return {str(did): 0 for did in take}
    same_topic = {d["id"] for d in docs if d["topic"] == topic}
    lexical = [did for did in bm25_rank[:15] if did in same_topic and did not in qrels]
    n_lex = min(len(lexical), need // 2 + 1)
    for did in lexical[:n_lex]:
        qrels[did] = 0
    rest = sorted(d["id"] for d in docs if d["topic"] == topic and d["id"] not in qrels)
    n_rand = max(0, need - n_lex)
    for did in rng.choice(rest, size=min(n_rand, len(rest)), replace=False):
        qrels[str(did)] = 0
    return qrels


def ranked(scores: dict[str, float], n: int = N_RUN_DOCS, strict: bool = True):
    """Sort by score (desc), ties by docid; round to 4 decimals.

    With ``strict`` the rounded scores are forced to be strictly decreasing
    (a tie is nudged down by 0.0001), which keeps simulated runs tie-free.
    """
    items = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:n]
    out, prev = [], None
    for did, s in items:
        s = round(s, 4)
        if strict and prev is not None and s >= prev:
            s = round(prev - 0.0001, 4)
        assert s > 0, "run scores must be positive"
        out.append((did, s))
        prev = s
    return out


def trec_lines(qid: str, ranking, tag: str) -> list[str]:
    return [
        f"{qid} Q0 {did} {r} {s:.4f} {tag}" for r, (did, s) in enumerate(ranking, 1)
    ]


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------

README_TEMPLATE = """\
# rankgate demo dataset

This folder holds a small, fully synthetic retrieval test collection used by
rankgate's demos, docs and tests. It has {n_docs} short documents on five topics
(home coffee brewing, trail running, houseplant care, personal finance basics and
bicycle maintenance, plus a few off-topic noise documents and one exact duplicate),
{n_queries} queries tagged with `topic` and `difficulty` (easy, medium, or hard,
where hard queries paraphrase the documents' wording so lexical matching
struggles), {n_qrels} graded judgments (0-3, {n_rel} of them relevant) in both TREC
(`qrels.txt`) and BEIR (`qrels.tsv`) formats, and three TREC-format runs of
clearly different quality. {n_norel} queries have judgments but no relevant document.
All text was written for this project and the whole folder is generated
deterministically by `scripts/make_demo_data.py`; do not edit it by hand, but
change the script and rerun it instead.

| run file | tag | how it was made | quality | queries |
| --- | --- | --- | --- | --- |
| `runs/dense.txt` | `dense` | simulated dense retriever: judged relevance plus seeded noise | best | {cov_dense} |
| `runs/bm25.txt` | `bm25` | real Okapi BM25 (k1=1.2, b=0.75) over title and text with RM3-style pseudo-relevance feedback; contains score ties | medium | {cov_bm25} |
| `runs/keyword_first.txt` | `keyword_first` | docs containing the query's first keyword first, in random order, then random docs | poor | {cov_weak} (misses `{missing}`) |
| `runs/dense_v2.txt` | `dense_v2` | a candidate "new model" for the gate demo: dense with small noise, but most relevance signal lost on the coffee topic | regresses on coffee | {cov_v2} |

`gates.yaml` is the gate config that `rankgate demo` applies to `dense_v2` with `dense` as the baseline.

Each run lists {n_run} documents per query with strictly positive scores rounded
to 4 decimals (ties in `bm25.txt` are listed in docid order).
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    root = Path(__file__).resolve().parents[1]
    parser.add_argument(
        "--out", type=Path, default=root / "src" / "rankgate" / "data" / "demo"
    )
    args = parser.parse_args()
    out: Path = args.out

    rng_corpus = np.random.default_rng(SEED)
    rng_ids = np.random.default_rng(SEED + 1)
    rng_judge = np.random.default_rng(SEED + 2)
    rng_dense = np.random.default_rng(SEED + 3)
    rng_weak = np.random.default_rng(SEED + 4)
    rng_v2 = np.random.default_rng(SEED + 5)  # its own stream: the other runs stay as they were

    # --- corpus -----------------------------------------------------------
    docs = build_corpus(rng_corpus)
    order = rng_ids.permutation(len(docs))
    for new_idx, old_idx in enumerate(order):
        docs[int(old_idx)]["id"] = f"d{new_idx + 1:03d}"
    docs.sort(key=lambda d: d["id"])
    doc_by_id = {d["id"]: d for d in docs}
    doc_ids = [d["id"] for d in docs]

    # --- queries ------------------------------------------------------------
    flat = [
        (topic, text, diff, targets)
        for topic, qs in QUERIES.items()
        for text, diff, targets in qs
    ]
    q_order = rng_ids.permutation(len(flat))
    queries = []
    for new_idx, old_idx in enumerate(q_order):
        topic, text, diff, targets = flat[int(old_idx)]
        queries.append(
            {
                "id": f"q{new_idx + 1:02d}",
                "text": text,
                "topic": topic,
                "difficulty": diff,
                "targets": targets,
            }
        )

    # --- BM25 run -------------------------------------------------------------
    bm25 = BM25({d["id"]: d["title"] + " " + d["text"] for d in docs})
    bm25_scores = {q["id"]: bm25.score_prf(q["text"]) for q in queries}
    bm25_rank = {
        qid: sorted(s, key=lambda did: (-s[did], did)) for qid, s in bm25_scores.items()
    }

    # --- judgments --------------------------------------------------------------
    qrels: dict[str, dict[str, int]] = {}
    for q in queries:
        qrels[q["id"]] = judge(
            q["text"], q["topic"], q["targets"], docs, bm25_rank[q["id"]], rng_judge
        )

    # --- runs -------------------------------------------------------------------
    runs: dict[str, list[str]] = {"bm25": [], "dense": [], "keyword_first": [], "dense_v2": []}
    for q in queries:
        qid = q["id"]
        # bm25: only documents sharing a term get a positive score.
        pos = {did: s for did, s in bm25_scores[qid].items() if s > 0}
        assert len(pos) >= N_RUN_DOCS, f"{qid}: only {len(pos)} docs match lexically"
        runs["bm25"] += trec_lines(qid, ranked(pos, strict=False), "bm25")

        # dense: similarity driven by (hidden) relevance and topic, plus noise.
        hard = q["difficulty"] == "hard"
        sigma = 0.09 if hard else 0.07
        bm = bm25_scores[qid]
        bm_max = max(bm.values()) or 1.0
        dense = {}
        for did in doc_ids:
            d = doc_by_id[did]
            grade = qrels[qid].get(did, 0)
            s = 0.32 + (0.14 if d["topic"] == q["topic"] else 0.0)
            if d["sub"] is not None and any(
                d["sub"] == s_ for s_, _, _ in q["targets"]
            ):
                s += 0.03
            s += 0.075 * grade + 0.05 * bm[did] / bm_max
            s += float(rng_dense.normal(0.0, sigma))
            dense[did] = min(max(s, 0.01), 0.99)
        runs["dense"] += trec_lines(qid, ranked(dense), "dense")

        # dense_v2: a candidate "new embedding model" for the gate demo. Close to dense
        # overall, but it lost most of its relevance signal on one topic (coffee), so the
        # gate should catch a regression that the overall mean only partly shows.
        v2 = {}
        for did in doc_ids:
            s = dense[did] + float(rng_v2.normal(0.0, 0.015))
            if q["topic"] == V2_WEAK_TOPIC:
                s -= 0.06 * qrels[qid].get(did, 0) + float(rng_v2.normal(0.0, 0.05))
            v2[did] = min(max(s, 0.01), 0.99)
        runs["dense_v2"] += trec_lines(qid, ranked(v2), "dense_v2")

        # keyword_first: docs containing the first keyword, shuffled, then random docs.
        noise = rng_weak.random(len(doc_ids))
        if q["text"] == WEAK_RUN_MISSING_QUERY:
            continue  # the weak system failed on this query and returned nothing
        first = tokenize(q["text"])[0]
        weak = {}
        for i, did in enumerate(doc_ids):
            has = first in bm25.tf[did]
            weak[did] = (0.6 if has else 0.0) + 0.999 * float(noise[i]) + 0.0001
        runs["keyword_first"] += trec_lines(qid, ranked(weak), "keyword_first")

    # --- checks -------------------------------------------------------------------
    bm25_has_tie = any(
        a.split()[0] == b.split()[0] and a.split()[4] == b.split()[4]
        for a, b in zip(runs["bm25"], runs["bm25"][1:], strict=False)
    )
    assert bm25_has_tie, "expected at least one score tie in the bm25 run"
    missing = [q["id"] for q in queries if q["text"] == WEAK_RUN_MISSING_QUERY]
    assert len(missing) == 1 and any(g > 0 for g in qrels[missing[0]].values())

    # --- write --------------------------------------------------------------------
    (out / "runs").mkdir(parents=True, exist_ok=True)

    def write(path: Path, lines: list[str]) -> None:
        path.write_text(
            "".join(line + "\n" for line in lines), encoding="utf-8", newline="\n"
        )

    write(
        out / "corpus.jsonl",
        [
            json.dumps(
                {"_id": d["id"], "title": d["title"], "text": d["text"]},
                ensure_ascii=False,
            )
            for d in docs
        ],
    )
    write(
        out / "queries.jsonl",
        [
            json.dumps(
                {
                    "_id": q["id"],
                    "text": q["text"],
                    "tags": {"topic": q["topic"], "difficulty": q["difficulty"]},
                },
                ensure_ascii=False,
            )
            for q in queries
        ],
    )
    qrel_rows = [
        (qid, did, g) for qid in sorted(qrels) for did, g in sorted(qrels[qid].items())
    ]
    write(out / "qrels.txt", [f"{qid} 0 {did} {g}" for qid, did, g in qrel_rows])
    write(
        out / "qrels.tsv",
        ["query-id\tcorpus-id\tscore"]
        + [f"{qid}\t{did}\t{g}" for qid, did, g in qrel_rows],
    )
    for name, lines in runs.items():
        write(out / "runs" / f"{name}.txt", lines)

    def coverage(lines):
        return len({line.split()[0] for line in lines})

    readme = README_TEMPLATE.format(
        n_docs=len(docs),
        n_queries=len(queries),
        n_qrels=len(qrel_rows),
        n_rel=sum(1 for *_, g in qrel_rows if g > 0),
        n_norel=sum(1 for qid in qrels if not any(g > 0 for g in qrels[qid].values())),
        cov_dense=coverage(runs["dense"]),
        cov_bm25=coverage(runs["bm25"]),
        cov_weak=coverage(runs["keyword_first"]),
        cov_v2=coverage(runs["dense_v2"]),
        missing=missing[0],
        n_run=N_RUN_DOCS,
    )
    (out / "README.md").write_text(readme, encoding="utf-8", newline="\n")

    total = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(
        f"wrote {len(docs)} docs, {len(queries)} queries, {len(qrel_rows)} judgments "
        f"to {out} ({total / 1024:.1f} KiB)"
    )


if __name__ == "__main__":
    main()
