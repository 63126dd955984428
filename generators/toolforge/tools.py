"""The 19 base virtual tools (one per family) and the keyword router that picks a family for a passage.

Each family is described once, by a `FamilyProfile`: the parts of its description, its parameters, extra
optional parameters that variants may add, the nouns its tool names may use, and its routing keywords.
The base tool `<family>_search` is rendered from the profile; `synth.generators.toolforge.variants` rewrites
the same parts into variants.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from synth.validators.toolforge.model import ToolSpec

ParamKind = Literal["string", "enum", "array", "integer", "boolean"]
FALLBACK_FAMILY = "general_information"


@dataclass(frozen=True, slots=True)
class ParamSpec:
    """One tool parameter; `enum` is used by `enum` parameters (and as item choices by `array` ones)."""

    name: str
    kind: ParamKind
    description: str
    required: bool = False
    enum: tuple[str, ...] = ()

    def to_schema(self) -> dict[str, Any]:
        """The JSON-schema property for this parameter."""
        if self.kind == "enum":
            return {"type": "string", "description": self.description, "enum": list(self.enum)}
        if self.kind == "array":
            items: dict[str, Any] = {"type": "string"}
            if self.enum:
                items["enum"] = list(self.enum)
            return {"type": "array", "description": self.description, "items": items}
        return {"type": self.kind, "description": self.description}


@dataclass(frozen=True, slots=True)
class FamilyProfile:
    """Everything known about a tool family: description parts, parameters, name nouns, routing keywords."""

    family: str
    subject: str
    aspects: str
    usage: str
    params: tuple[ParamSpec, ...]
    extras: tuple[ParamSpec, ...]
    nouns: tuple[str, ...]
    keywords: tuple[str, ...]

    @property
    def base_name(self) -> str:
        return f"{self.family}_search"

    def describe(self) -> str:
        """The base tool's description."""
        return f"Search {self.subject}. Returns {self.aspects}. Use it for questions about {self.usage}."


QUERY = ParamSpec("query", "string", "The natural-language search query.", required=True)


def P(name: str, kind: ParamKind, description: str, *enum: str, required: bool = False) -> ParamSpec:  # noqa: N802
    """Shorthand for a `ParamSpec` in the profile table."""
    return ParamSpec(name, kind, description, required, tuple(enum))


def R(name: str, kind: ParamKind, description: str, *enum: str) -> ParamSpec:  # noqa: N802
    """Shorthand for a required `ParamSpec`."""
    return ParamSpec(name, kind, description, True, tuple(enum))


# fmt: off
# fmt: off
PROFILES: tuple[FamilyProfile, ...] = (
    FamilyProfile(
        "person_information",
        "biographical information about people",
        "birth and death dates, nationality, occupation, family and career highlights",
        "who a person is, when they lived and what they are known for",
        (
            R("person_name", "string", "Full or best-known name of the person."),
            P("aspects", "array", "Biographical aspects to return.", "birth", "death", "nationality", "career"),
            P("nationality", "string", "Nationality, to tell apart people with the same name."),
            P("occupation", "enum", "Main occupation.", "actor", "musician", "writer", "director", "politician",
             "scientist", "artist", "business", "other"),
            P("include_family", "boolean", "Whether to include parents, spouses and children."),
        ),
        (
            P("birth_year", "integer", "Year of birth, if known."),
            P("known_for", "string", "A work or deed the person is known for."),
            P("aliases", "array", "Other names, stage names or pseudonyms."),
        ),
        ("person", "individual", "people", "biography", "figure", "persona"),
        ("born", "actor", "actress", "singer", "songwriter", "rapper", "musician", "composer", "director",
         "filmmaker", "screenwriter", "producer", "writer", "author", "novelist", "poet", "journalist", "artist",
         "painter", "photographer", "model", "comedian", "dancer", "entrepreneur", "businessman", "businesswoman",
         "philanthropist", "magician", "personality", "presenter", "television host", "dj", "princess", "prince",
         "stage name", "known professionally", "biography", "scholar", "socialite", "illustrator", "editor",
         "educator", "celebutante", "activist", "cinematographer", "saxophonist", "guitarist", "pianist", "violinist",
         "drummer", "bassist", "vocalist", "playwright", "architect", "designer", "chef"),
    ),
    FamilyProfile(
        "creation_information",
        "creative works such as films, books, albums, songs, television series and video games",
        "creators, release dates, cast and credits, genre and publishers or labels",
        "who made a work, when it was released and who appears in it",
        (
            R("work_title", "string", "Title of the work."),
            R("work_type", "enum", "Kind of work.", "film", "book", "album", "song", "television_series",
             "video_game", "artwork", "magazine", "other"),
            P("creator", "string", "Author, director, artist or band, to disambiguate."),
            P("release_year", "integer", "Year of first release or publication."),
            P("credits", "array", "Credits to list.", "director", "cast", "author", "label", "publisher"),
        ),
        (
            P("genre", "string", "Genre of the work."),
            P("original_language", "string", "Language the work was first released in."),
            P("include_reception", "boolean", "Whether to include reviews and awards."),
        ),
        ("creation", "creative_work", "work", "media", "artwork", "title"),
        ("film", "movie", "album", "song", "single", "novel", "book", "series", "sitcom", "television series",
         "tv series", "episode", "soundtrack", "studio album", "debut album", "ep", "discography", "magazine",
         "comic", "manga", "anime", "video game", "game", "play", "musical", "opera", "painting", "sculpture", "poem",
         "short story", "documentary", "starring", "directed", "written by", "released", "band", "boy group",
         "girl group", "record label", "records", "show", "featurette", "animated", "trilogy", "sequel", "fiction",
         "fantasy", "horror", "comedy", "drama", "rock", "pop", "hip hop", "jazz", "franchise", "character",
         "publication", "newspaper", "book series", "novella", "radio", "box set", "composition", "publishing house",
         "opera house", "theatre", "sonata", "symphony", "concerto", "cantata", "list of films"),
    ),
    FamilyProfile(
        "historical_event_information",
        "historical events such as wars, battles, revolutions, treaties and disasters",
        "dates, locations, participants, causes and outcomes",
        "what happened in the past, when it happened and who took part",
        (
            R("event_name", "string", "Name of the event."),
            P("start_year", "integer", "Earliest year of interest."),
            P("end_year", "integer", "Latest year of interest."),
            P("participants", "array", "People, states or groups involved."),
            P("event_type", "enum", "Kind of event.", "war", "battle", "revolution", "treaty", "disaster",
             "discovery", "other"),
        ),
        (
            P("region", "string", "Region where the event took place."),
            P("include_consequences", "boolean", "Whether to include the aftermath."),
            P("era", "string", "Historical era or period."),
        ),
        ("historical_event", "history", "past_event", "event", "chronicle", "historic_incident"),
        ("war", "battle", "siege", "revolution", "rebellion", "uprising", "massacre", "treaty", "empire", "dynasty",
         "ottoman", "medieval", "century", "ancient", "invasion", "conquest", "revolt", "coup", "crisis", "disaster",
         "earthquake", "expedition", "history", "era", "world war", "civil war",
         "independence", "colonial", "kingdom", "reign", "sultan", "emperor", "pharaoh", "assassination", "plague",
         "famine", "incident", "riot", "strike", "hijacking", "landing"),
    ),
    FamilyProfile(
        "geographic_information",
        "geographic information about places such as countries, cities, regions, rivers, mountains and landmarks",
        "location, administrative division, population, area and notable features",
        "where a place is, what it belongs to and where an organisation is based",
        (
            R("place_name", "string", "Name of the place."),
            P("place_type", "enum", "Kind of place.", "country", "state", "county", "city", "town", "village",
             "river", "lake", "mountain", "island", "region", "landmark", "other"),
            P("country", "string", "Country the place is in, to disambiguate."),
            P("attributes", "array", "Facts to return.", "location", "population", "area", "coordinates",
             "administrative_division"),
            P("include_nearby", "boolean", "Whether to list nearby places."),
        ),
        (
            P("min_population", "integer", "Smallest population of interest."),
            P("administrative_level", "string", "Administrative level, such as county or province."),
            P("climate_zone", "string", "Climate zone of the place."),
        ),
        ("geographic", "geo", "location", "place", "geography", "locale"),
        ("city", "town", "village", "county", "country", "state", "province", "region", "district", "municipality",
         "capital", "census designated place", "unincorporated community", "community", "population", "census",
         "river", "lake", "mountain", "island", "peninsula", "valley", "park", "metropolitan area", "neighborhood",
         "borough", "suburb", "border", "coast", "civil parish", "bay", "landmark", "building", "historic house",
         "mansion", "skyscraper", "beach", "forest", "tower", "bridge", "castle", "historic place",
         "national register", "council area", "parish", "township", "seat", "downtown"),
    ),
    FamilyProfile(
        "scientific_information",
        "scientific knowledge such as theories, laws, phenomena, species, chemical elements and discoveries",
        "definitions, explanations, formulas, classification and who discovered them",
        "how nature works, what a scientific term means and how things are classified",
        (
            R("concept", "string", "Scientific concept, law, species or substance."),
            P("discipline", "enum", "Field of science.", "physics", "chemistry", "biology", "astronomy",
             "earth_science", "mathematics", "computer_science", "other"),
            P("detail_level", "enum", "Depth of the explanation.", "basic", "intermediate", "advanced"),
            P("include_formulas", "boolean", "Whether to include equations and formulas."),
            P("related_terms", "array", "Related terms to cover as well."),
        ),
        (
            P("discovery_year", "integer", "Year of discovery, if relevant."),
            P("taxonomic_rank", "string", "Taxonomic rank, for living things."),
            P("units", "string", "Preferred system of units."),
        ),
        ("science", "scientific", "theory", "phenomenon", "knowledge", "concept"),
        ("species", "genus", "family of", "plant", "flowering plant", "animal", "bird", "fish", "insect", "mammal",
         "reptile", "fungus", "bacteria", "virus", "cell", "gene", "protein", "molecule", "chemical", "compound",
         "element", "atom", "physics", "chemistry", "biology", "astronomy", "planet", "star", "galaxy", "asteroid",
         "theory", "law", "equation", "mathematics", "theorem", "scientist", "physicist", "chemist", "biologist",
         "mathematician", "electronic", "device", "software", "computer", "technology", "engineering", "invented",
         "invention", "remote control", "smartwatch", "application", "algorithm", "breed", "dog", "horse", "tree",
         "flower", "geology", "mineral"),
    ),
    FamilyProfile(
        "academic_research",
        "academic research such as papers, citations, journals, conferences and researchers",
        "titles, authors, venues, publication years, abstracts and citation counts",
        "who published a study, where and when it appeared and how often it is cited",
        (
            R("topic", "string", "Research topic or paper title."),
            P("author", "string", "Author to filter by."),
            P("published_after", "integer", "Earliest publication year."),
            P("venue", "string", "Journal or conference."),
            P("document_types", "array", "Kinds of documents.", "article", "conference_paper", "thesis", "preprint",
             "book_chapter"),
            P("peer_reviewed_only", "boolean", "Whether to return only peer-reviewed work."),
        ),
        (
            P("min_citations", "integer", "Smallest citation count of interest."),
            P("research_field", "string", "Research field."),
            P("open_access_only", "boolean", "Whether to return only open-access work."),
        ),
        ("academic", "scholarly", "research", "paper", "publication", "literature"),
        ("journal", "peer reviewed", "paper", "thesis", "dissertation", "citation", "citations", "research",
         "researcher", "study", "studies", "conference", "proceedings", "professor", "academic", "scholar",
         "laboratory", "institute", "fellow", "doctorate", "phd", "published", "academia", "lecturer"),
    ),
    FamilyProfile(
        "legal_information",
        "legal information such as laws, statutes, court cases, regulations and legal procedures",
        "provisions, rulings, parties, jurisdictions and dates of enactment",
        "what a law says, how a court ruled and which rules apply where",
        (
            R("legal_topic", "string", "Law, case or legal question."),
            R("jurisdiction", "string", "Country, state or court system."),
            P("document_type", "enum", "Kind of legal source.", "statute", "case_law", "regulation", "treaty",
             "constitution", "other"),
            P("year", "integer", "Year of enactment or decision."),
            P("include_citations", "boolean", "Whether to include legal citations."),
        ),
        (
            P("court_level", "string", "Level of the court."),
            P("legal_areas", "array", "Areas of law, such as criminal or contract law."),
            P("in_force_only", "boolean", "Whether to return only laws in force."),
        ),
        ("legal", "law", "statute", "jurisprudence", "legislation", "court_case"),
        ("law", "court", "supreme court", "judge", "justice", "lawyer", "attorney", "legal", "statute", "act",
         "legislation", "ban", "regulation", "ruling", "lawsuit", "trial", "convicted", "crime", "criminal", "prison",
         "sentenced", "rights", "constitution", "amendment", "jurisdiction", "case", "ordinance", "prohibit",
         "license", "patent", "copyright", "contract", "mortgage", "loan modification"),
    ),
    FamilyProfile(
        "economic_information",
        "economic information about companies, industries, markets and economic indicators",
        "revenue, ownership, market data, trade figures and macroeconomic statistics",
        "how a company or economy performs, who owns what and what a market is worth",
        (
            R("subject", "string", "Company, industry, market or indicator."),
            P("data_type", "enum", "Kind of data.", "company_profile", "market_data", "macro_indicator",
             "industry_overview", "trade"),
            P("indicators", "array", "Figures to return, such as revenue or GDP."),
            P("region", "string", "Country or region."),
            P("fiscal_year", "integer", "Fiscal year of interest."),
        ),
        (
            P("currency", "string", "Currency for monetary values."),
            P("adjust_for_inflation", "boolean", "Whether to adjust values for inflation."),
            P("sector", "string", "Economic sector."),
        ),
        ("economic", "economy", "finance", "market", "business", "commerce"),
        ("company", "corporation", "inc", "ltd", "business", "firm", "industry", "market", "economy", "economic",
         "bank", "finance", "financial", "investment", "investor", "stock", "shares", "revenue", "profit", "trade",
         "brand", "subsidiary", "conglomerate", "manufacturer", "retailer", "multinational", "founded", "ceo",
         "chairman", "consulting", "management", "enterprise", "holding", "mortgage", "consultancy",
         "entertainment company", "publisher", "tax", "price", "currency", "gdp", "sales"),
    ),
    FamilyProfile(
        "medical_information",
        "medical information about diseases, symptoms, treatments, drugs and health care",
        "causes, symptoms, diagnosis, treatment options and prevention",
        "what a condition is, how it is treated and which drug does what",
        (
            R("condition", "string", "Disease, symptom, drug or procedure."),
            R("info_type", "enum", "What to return.", "symptoms", "causes", "treatment", "medication", "prevention",
             "epidemiology", "overview"),
            P("patient_age", "integer", "Age of the patient, in years."),
            P("symptoms", "array", "Observed symptoms."),
            P("include_drug_interactions", "boolean", "Whether to include drug interactions."),
        ),
        (
            P("severity", "string", "Severity of the condition."),
            P("body_system", "string", "Organ system affected."),
            P("clinical_trials_only", "boolean", "Whether to return only clinical-trial evidence."),
        ),
        ("medical", "health", "clinical", "disease", "medicine", "healthcare"),
        ("disease", "disorder", "syndrome", "symptom", "treatment", "therapy", "drug", "medication", "medicine",
         "medical", "hospital", "physician", "surgeon", "surgery", "clinical", "patient", "infection", "cancer",
         "diabetes", "vaccine", "health", "public health", "nurse", "diagnosis", "pharmaceutical", "psychiatric",
         "psychologist", "virus", "pandemic", "epidemic", "m d"),
    ),
    FamilyProfile(
        "tradition_cultural_information",
        "cultural information about traditions, festivals, customs, cuisines, languages and folklore",
        "origins, practices, symbolism, regional variants and dates of celebration",
        "where a custom comes from, how it is practised and what it means",
        (
            R("tradition_name", "string", "Name of the tradition, festival or custom."),
            P("culture", "string", "Culture, people or region it belongs to."),
            P("aspects", "array", "Aspects to return.", "origin", "practices", "symbolism", "dates", "food"),
            P("celebration_month", "integer", "Month of celebration, 1 to 12."),
            P("category", "enum", "Kind of tradition.", "festival", "ritual", "cuisine", "language", "folklore",
             "art_form", "dress", "other"),
        ),
        (
            P("historical_period", "string", "Period in which it arose."),
            P("still_practised", "boolean", "Whether it is still practised today."),
            P("languages", "array", "Languages its terms come from."),
        ),
        ("tradition", "cultural", "culture", "heritage", "custom", "folklore"),
        ("tradition", "traditional", "festival", "custom", "culture", "cultural", "folklore", "folk", "mythology",
         "myth", "legend", "cuisine", "dish", "food", "language", "dialect", "ethnic group", "ceremony", "ritual",
         "dance", "costume", "heritage", "holiday", "celebration", "nursery rhyme", "fairy tale", "style", "genre",
         "music genre", "art", "craft", "etiquette", "tribe", "indigenous"),
    ),
    FamilyProfile(
        "environmental_information",
        "environmental information about ecosystems, climate, pollution and conservation",
        "environmental indicators, conservation status, protected areas and trends over time",
        "the state of an environment, the threats it faces and how it is protected",
        (
            R("topic", "string", "Environmental topic, habitat or species."),
            P("location", "string", "Place or region of interest."),
            P("indicators", "array", "Indicators to return.", "air_quality", "emissions", "biodiversity",
             "water_quality", "land_use"),
            P("conservation_status", "enum", "IUCN status of interest.", "least_concern", "near_threatened",
             "vulnerable", "endangered", "critically_endangered", "extinct"),
            P("year", "integer", "Year of the data."),
            P("include_trends", "boolean", "Whether to include trends over time."),
        ),
        (
            P("habitat_type", "string", "Kind of habitat."),
            P("data_sources", "array", "Preferred data sources."),
            P("protected_only", "boolean", "Whether to cover only protected areas."),
        ),
        ("environmental", "environment", "ecology", "climate", "nature", "ecosystem"),
        ("environment", "environmental", "ecosystem", "ecology", "climate", "climate change", "pollution",
         "conservation", "endangered", "habitat", "wildlife", "forest", "wetland", "reserve", "nature reserve",
         "national park", "provincial park", "protected area", "biodiversity", "emissions", "renewable",
         "sustainability", "gmo", "genetically modified", "organic", "recycling", "fishing lake", "wilderness",
         "water", "drought", "flood", "glacier", "tornado", "tornado outbreak", "hurricane", "storm", "weather",
         "tropical cyclone", "animal rights"),
    ),
    FamilyProfile(
        "sports_information",
        "sports information about athletes, teams, leagues, competitions, venues and results",
        "rosters, statistics, seasons, results, records and home venues",
        "who plays for which team, who won a competition and where games are played",
        (
            R("entity_name", "string", "Athlete, team, league, event or venue."),
            R("sport", "enum", "Sport.", "football", "basketball", "baseball", "ice_hockey", "american_football",
             "tennis", "motorsport", "athletics", "cricket", "other"),
            P("season", "string", "Season, such as 2011-12."),
            P("stat_types", "array", "Statistics to return."),
            P("competition", "string", "League or competition."),
            P("include_roster", "boolean", "Whether to include the team roster."),
        ),
        (
            P("position", "string", "Playing position."),
            P("career_start_year", "integer", "Year the career or club history starts."),
            P("venue", "string", "Stadium or arena."),
        ),
        ("sports", "sport", "athletic", "team", "league", "match"),
        ("footballer", "football", "soccer", "basketball", "baseball", "hockey", "ice hockey", "tennis", "golf",
         "golfer", "cricket", "cricketer", "rugby", "athlete", "player", "goalkeeper", "defender", "midfielder",
         "forward", "striker", "pitcher", "quarterback", "coach", "manager", "team", "club", "league", "season",
         "championship", "tournament", "cup", "grand prix", "formula one", "racing", "race", "driver", "race car",
         "nascar", "olympic", "olympics", "medal", "stadium", "arena", "sports", "sport", "ncaa", "division i",
         "conference", "boxer", "wrestler", "wrestling", "handball", "cyclist", "swimmer", "sprinter", "marathon",
         "nba", "nfl", "nhl", "mlb", "premier league", "fifa", "uefa", "playoffs", "tennis player", "skater",
         "jockey", "seat", "skier", "ski jumper", "archer", "fencer", "rower", "gymnast", "figure skater",
         "sportswriter", "olympian", "mountaineer"),
    ),
    FamilyProfile(
        "transportation_information",
        "transportation information about roads, railways, airports, airlines, ships and vehicles",
        "routes, operators, termini, schedules and vehicle specifications",
        "how to get somewhere, which route connects two places and who operates it",
        (
            R("subject", "string", "Route, station, airport, line or vehicle."),
            R("mode", "enum", "Mode of transport.", "road", "rail", "air", "sea", "public_transit", "other"),
            P("origin", "string", "Start of the route."),
            P("destination", "string", "End of the route."),
            P("attributes", "array", "Facts to return, such as length, operator or stops."),
            P("operating_only", "boolean", "Whether to return only services still in operation."),
        ),
        (
            P("max_transfers", "integer", "Largest number of changes."),
            P("operator", "string", "Operating company or agency."),
            P("vehicle_type", "string", "Kind of vehicle."),
        ),
        ("transportation", "transport", "transit", "travel_route", "mobility", "route"),
        ("road", "highway", "motorway", "route", "railway", "railroad", "rail", "train", "station", "line", "metro",
         "subway", "tram", "bus", "airport", "airline", "aircraft", "flight", "ship", "ferry", "port", "harbour",
         "harbor", "canal", "vehicle", "car", "automobile", "yacht", "boat", "traffic", "transit", "transport",
         "transportation", "interstate", "iata", "icao", "locomotive", "model train", "bicycle", "truck",
         "regional road", "passenger"),
    ),
    FamilyProfile(
        "education_information",
        "education information about schools, colleges, universities and academic programmes",
        "founding dates, locations, enrolment, programmes, rankings and affiliations",
        "where a school is, when it was founded and what it teaches",
        (
            R("institution_name", "string", "Name of the school or university."),
            P("institution_type", "enum", "Kind of institution.", "university", "college", "high_school",
             "primary_school", "academy", "other"),
            P("location", "string", "City, state or country."),
            P("attributes", "array", "Facts to return.", "founding_year", "enrollment", "ranking", "programs",
             "affiliation"),
            P("founded_before", "integer", "Latest founding year of interest."),
            P("public_only", "boolean", "Whether to return only public institutions."),
        ),
        (
            P("degree_level", "string", "Degree level, such as bachelor or doctorate."),
            P("programs", "array", "Programmes of study."),
            P("accredited_only", "boolean", "Whether to return only accredited institutions."),
        ),
        ("education", "educational", "school", "university", "campus", "learning"),
        ("university", "college", "school", "high school", "academy", "campus", "students", "student", "faculty",
         "education", "educational", "curriculum", "degree", "graduate", "undergraduate", "alma mater", "enrollment",
         "public research university", "private university", "seminary", "teacher", "teaching", "scholarship",
         "course", "programme", "program", "kindergarten", "tuition"),
    ),
    FamilyProfile(
        "lifestyle_service_information",
        "lifestyle services such as restaurants, hotels, shops, venues and consumer brands",
        "locations, opening hours, price levels, ratings and offerings",
        "where to eat, stay or shop and what a business offers",
        (
            R("service_type", "enum", "Kind of service.", "restaurant", "hotel", "shop", "entertainment", "wellness",
             "brand", "other"),
            P("name_or_keyword", "string", "Business name or keyword."),
            R("location", "string", "City or neighbourhood."),
            P("price_level", "integer", "Price level from 1 (cheap) to 4 (expensive)."),
            P("features", "array", "Wanted features, such as parking or vegetarian options."),
            P("open_now", "boolean", "Whether to return only places open now."),
        ),
        (
            P("min_rating", "integer", "Lowest rating of interest, 1 to 5."),
            P("cuisine", "string", "Cuisine, for restaurants."),
            P("booking_required", "boolean", "Whether the place takes reservations."),
        ),
        ("lifestyle", "service", "local_service", "leisure", "consumer", "venue"),
        ("restaurant", "hotel", "resort", "shop", "shopping", "store", "mall", "cafe", "bar", "pub", "chain",
         "fast food", "franchise", "brand", "fashion", "clothing", "cosmetics", "beverage", "drink", "beer", "wine",
         "whiskey", "coffee", "food", "menu", "spa", "nightclub", "casino", "theme park", "amusement park",
         "casino resort", "retail", "products", "consumer", "lodging", "inn", "dining", "convention", "conventions",
         "hobby", "toy", "toys", "brewery", "board game"),
    ),
    FamilyProfile(
        "military_information",
        "military information about armed forces, units, ranks, operations and equipment",
        "specifications, service history, operators, commanders and deployments",
        "military equipment, who used it and which units fought where",
        (
            R("subject", "string", "Weapon, vehicle, unit, rank or operation."),
            R("category", "enum", "Kind of subject.", "aircraft", "ship", "vehicle", "weapon", "unit", "rank",
             "operation", "other"),
            P("country", "string", "Country that operates or operated it."),
            P("specifications", "array", "Specifications to return."),
            P("in_service", "boolean", "Whether to return only equipment still in service."),
        ),
        (
            P("service_entry_year", "integer", "Year it entered service."),
            P("branch", "string", "Branch of the armed forces."),
            P("conflicts", "array", "Conflicts it was used in."),
        ),
        ("military", "defense", "armed_forces", "warfare", "army", "combat"),
        ("military", "army", "navy", "naval", "air force", "marine", "marines", "soldier", "officer", "general",
         "admiral", "rear admiral", "colonel", "lieutenant", "captain", "sergeant", "regiment", "battalion",
         "brigade", "division", "squadron", "fleet", "warship", "battleship", "destroyer", "submarine", "fighter",
         "bomber", "tank", "weapon", "rifle", "missile", "artillery", "defence", "defense", "armed forces",
         "commander", "commanded", "troops", "combat", "veteran"),
    ),
    FamilyProfile(
        "religious_information",
        "religious and philosophical information about faiths, doctrines, sacred texts and places of worship",
        "beliefs, practices, scriptures, founders, schools of thought and sacred sites",
        "what a religion or philosophy teaches and where it is practised",
        (
            R("topic", "string", "Doctrine, text, figure or place of worship."),
            R("religion", "string", "Religion or philosophical school."),
            P("source_texts", "array", "Scriptures or texts to cite."),
            P("aspect", "enum", "What to return.", "doctrine", "history", "practice", "text", "figure",
             "place_of_worship", "philosophy"),
            P("include_interpretations", "boolean", "Whether to include differing interpretations."),
        ),
        (
            P("denomination", "string", "Denomination or branch."),
            P("century", "integer", "Century of interest."),
            P("original_language", "string", "Language of the original text."),
        ),
        ("religious", "religion", "faith", "spiritual", "theology", "belief"),
        ("religion", "religious", "church", "cathedral", "mosque", "temple", "synagogue", "monastery", "abbey",
         "chapel", "shrine", "catholic", "christian", "christianity", "islam", "islamic", "muslim", "jewish",
         "judaism", "hindu", "hinduism", "buddhist", "buddhism", "bible", "quran", "god", "gods", "deity", "saint",
         "pope", "bishop", "priest", "clergy", "theology", "doctrine", "philosophy", "philosopher", "worship",
         "sacred", "prayer", "lutheran", "protestant", "orthodox", "spiritual", "missionary", "diocese",
         "parish church", "biblical"),
    ),
    FamilyProfile(
        "politics_information",
        "political information about politicians, offices, parties, elections and governments",
        "terms of office, predecessors and successors, party affiliations and election results",
        "who held an office, who won an election and how a government is organised",
        (
            R("subject", "string", "Politician, office, party, election or government body."),
            P("country", "string", "Country or state."),
            P("office", "string", "Office or body, such as senate or prime minister."),
            P("election_year", "integer", "Year of the election."),
            P("party", "string", "Political party."),
            P("info_types", "array", "Facts to return.", "term", "predecessor", "successor", "results", "members"),
        ),
        (
            P("level", "enum", "Level of government.", "national", "regional", "local"),
            P("incumbent_only", "boolean", "Whether to return only current office holders."),
            P("constituency", "string", "Constituency or district."),
        ),
        ("politics", "political", "government", "civic", "policy", "governance"),
        ("politician", "political", "politics", "party", "election", "elected", "senate", "senator", "congress",
         "congressman", "parliament", "member of parliament", "minister", "prime minister", "president",
         "vice president", "governor", "mayor", "government", "secretary", "secretary of state",
         "assistant secretary", "cabinet", "ambassador", "diplomat", "office", "position", "treasurer", "legislature",
         "legislative", "democratic", "republican", "conservative", "labour", "liberal", "nationalist", "campaign",
         "referendum", "administration", "department", "agency", "official", "statesman", "monarch", "king", "queen"),
    ),
    FamilyProfile(
        "general_information",
        "general knowledge across domains when no specialised tool fits",
        "short encyclopedic summaries, definitions and related entities",
        "ambiguous or cross-domain topics that no other tool covers",
        (
            R("topic", "string", "Topic, entity or term."),
            P("category_hint", "string", "Broad category, if known."),
            P("max_results", "integer", "Largest number of results."),
            P("include_summary", "boolean", "Whether to include a short summary."),
            P("related_entities", "array", "Related entities to cover as well."),
        ),
        (
            P("language", "string", "Preferred language of the results."),
            P("sources", "array", "Preferred sources."),
            P("exact_match", "boolean", "Whether the topic must match exactly."),
        ),
        ("general", "general_knowledge", "encyclopedia", "common", "broad", "open_domain"),
        (),  # the fallback family: chosen when no other family matches
    ),
)
# fmt: on

FAMILIES: tuple[str, ...] = tuple(p.family for p in PROFILES)
PROFILE_BY_FAMILY: Mapping[str, FamilyProfile] = {p.family: p for p in PROFILES}
KEYWORDS: Mapping[str, tuple[str, ...]] = {p.family: p.keywords for p in PROFILES}


def build_parameters(params: tuple[ParamSpec, ...]) -> dict[str, Any]:
    """A JSON-schema `object` for `params` (in order); `required` lists the required names in that order."""
    return {
        "type": "object",
        "properties": {p.name: p.to_schema() for p in params},
        "required": [p.name for p in params if p.required],
    }


def base_tool(family: str) -> ToolSpec:
    """The base tool `<family>_search` of a built-in family."""
    profile = PROFILE_BY_FAMILY[family]
    return ToolSpec(
        name=profile.base_name,
        description=profile.describe(),
        parameters=build_parameters((QUERY, *profile.params)),
        family=family,
        origin="base",
    )


BASE_TOOLS: tuple[ToolSpec, ...] = tuple(base_tool(family) for family in FAMILIES)

# Routing: the defining phrase of the first sentence ("X is a 1994 American film") says most about a passage,
# then the title, then the rest of the first sentence, then the rest of the passage.
_WEIGHT_DEFINITION = 6
_WEIGHT_TITLE = 3
_WEIGHT_LEAD = 2
_WEIGHT_BODY = 1
_DEFINITION_WORDS = 10
_VERB = re.compile(r"\b(?:is|was|are|were)\b")
_DEFINITION_END = re.compile(
    r"[,;:.]|\b(?:by|of|from|in|for|with|that|which|who|whose|located|based|situated|and|known|best)\b"
)
_SENTENCE_END = re.compile(r"(?<!\b[A-Z])(?<!\b(?:Jr|Sr|St|Dr|Mr|Ms|No))(?<!\bMrs)[.!?]\s+(?=[A-Z0-9\"“])")
_LIFESPAN = re.compile(r"\((?:[^()]*\bborn\b|[^()]*\d{3,4}\s*[–-]\s*[^()]*\d{3,4})")
_PERSON = "person_information"
_SPORTS = "sports_information"


def normalize_tokens(text: str) -> list[str]:
    """Lower-cased alphanumeric tokens with a light plural folding (`countries` → `country`, `films` → `film`)."""
    return [_fold(token) for token in re.findall(r"[a-z0-9]+", text.lower())]


def _fold(token: str) -> str:
    if len(token) > 4 and token.endswith("ies"):
        return token[:-3] + "y"
    if len(token) > 3 and token.endswith("s") and not token.endswith(("ss", "us", "is")):
        return token[:-1]
    return token


def _padded(text: str) -> str:
    return " " + " ".join(normalize_tokens(text)) + " "


@functools.cache
def _phrase(keyword: str) -> str:
    return _padded(keyword)


@dataclass(frozen=True, slots=True)
class _Passage:
    """A passage cut into normalised, padded segments for phrase matching."""

    subject: str
    definition: str
    segments: tuple[tuple[str, int], ...]

    @classmethod
    def parse(cls, title: str, text: str) -> _Passage:
        parts = _SENTENCE_END.split(text.strip(), maxsplit=1)
        lead, body = parts[0], parts[1] if len(parts) > 1 else ""
        verb = _VERB.search(lead)
        subject = lead[: verb.start()] if verb else ""
        rest = re.sub(r"^\s*(?:one of|among)\b", "", lead[verb.end() :]) if verb else ""
        end = _DEFINITION_END.search(rest, 1)
        definition = " ".join(rest[: end.start() if end else len(rest)].split()[:_DEFINITION_WORDS])
        segments = (
            (_padded(definition), _WEIGHT_DEFINITION),
            (_padded(title), _WEIGHT_TITLE),
            (_padded(lead), _WEIGHT_LEAD),
            (_padded(body), _WEIGHT_BODY),
        )
        return cls(subject=subject, definition=segments[0][0], segments=segments)

    def hits(self, words: tuple[str, ...]) -> tuple[int, tuple[str, ...]]:
        """Sum of each keyword's best segment weight, and the keywords found."""
        score, matched = 0, []
        for word in dict.fromkeys(words):
            phrase = _phrase(word)
            weight = max((w for segment, w in self.segments if phrase in segment), default=0)
            if weight:
                score += weight
                matched.append(word)
        return score, tuple(matched)

    def defines(self, words: tuple[str, ...]) -> tuple[str, ...]:
        """The keywords found in the defining phrase."""
        return tuple(word for word in dict.fromkeys(words) if _phrase(word) in self.definition)


def score_families(
    title: str, text: str, *, keywords: Mapping[str, tuple[str, ...]] | None = None
) -> dict[str, tuple[int, tuple[str, ...]]]:
    """Keyword score and matched keywords of every family for a passage, in lexicon order."""
    passage = _Passage.parse(title, text)
    lexicon = KEYWORDS if keywords is None else keywords
    return {family: passage.hits(words) for family, words in lexicon.items()}


def route_family(title: str, text: str, *, keywords: Mapping[str, tuple[str, ...]] | None = None) -> tuple[str, str]:
    """Pick the family for a passage; returns (family, reason).

    People come first: a passage whose subject carries a birth or lifespan parenthesis, or whose defining phrase
    ("X is an American actor") names a person role, goes to `person_information`, or to `sports_information`
    when the defining phrase is a sports role (athletes, coaches, drivers). Otherwise every family is scored by
    its keywords: a match in the defining phrase weighs 6, in the title 3, elsewhere in the first sentence 2 and
    later 1. The family with the most keywords in the defining phrase wins, then the one with the best score,
    ties going to the family listed first; with no match the passage falls back to `general_information`.

    Args:
        keywords: the lexicon by family (default: the built-in one); a tool space passes it with user families.

    >>> route_family("Paris", "Paris is the capital and most populous city of France.")[0]
    'geographic_information'
    """
    lexicon = KEYWORDS if keywords is None else keywords
    passage = _Passage.parse(title, text)
    if _PERSON in lexicon:
        roles = passage.defines(lexicon[_PERSON])
        if roles or _LIFESPAN.search(passage.subject):
            sports = passage.defines(lexicon.get(_SPORTS, ()))
            if sports:
                return _SPORTS, f"athlete: sports role {', '.join(sports[:3])} in the defining phrase"
            cue = f"person role {', '.join(roles[:3])} in the defining phrase" if roles else "lifespan after the name"
            return _PERSON, f"person: {cue}"
    scores = {family: passage.hits(words) for family, words in lexicon.items()}
    defining = {family: len(passage.defines(words)) for family, words in lexicon.items()}
    best = max(scores, key=lambda family: (defining[family], scores[family][0]), default=FALLBACK_FAMILY)
    score, matched = scores.get(best, (0, ()))
    if score == 0:
        return FALLBACK_FAMILY, f"no family keyword matched; fallback to {FALLBACK_FAMILY}"
    where = "defining phrase" if defining[best] else "passage"
    return best, f"{where} keyword score {score} from {', '.join(matched[:5])}"
