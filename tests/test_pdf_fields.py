"""The fields of one printed reference in every common style: the title, the authors' family
names and the year, as the publishers' templates print them (strings copied from PDFs typeset
with each template's own .bst: acl_natbib, ACM-Reference-Format, elsarticle-harv/-num,
apacite, IEEEtran, splncs04, naturemag). A reading that is not one to accuse on says so
(``Fields.confident``)."""

from __future__ import annotations

import pytest

from citelens.documents.pdf.fields import read_fields

CASES = {
    "acl": (
        "Jacob Devlin, Ming-Wei Chang, Kenton Lee, and Kristina Toutanova. 2019. BERT: Pre-training of deep "
        "bidirectional transformers for language understanding. In Proceedings of NAACL-HLT, pages "
        "4171–4186, Minneapolis, Minnesota. Association for Computational Linguistics.",
        "BERT: Pre-training of deep bidirectional transformers for language understanding",
        ["Devlin", "Chang", "Lee", "Toutanova"],
        2019,
    ),
    "acl-letter-year": (
        "Ashish Vaswani, Noam Shazeer, Niki Parmar, and Illia Polosukhin. 2017a. Attention is all you need. "
        "In Advances in Neural Information Processing Systems, pages 5998–6008.",
        "Attention is all you need",
        ["Vaswani", "Shazeer", "Parmar", "Polosukhin"],
        2017,
    ),
    "acl-organisation": (
        "OpenAI. 2023. GPT-4 technical report. arXiv preprint arXiv:2303.08774.",
        "GPT-4 technical report",
        ["OpenAI"],
        2023,
    ),
    "acm": (
        "Stefan Behnel, Robert Bradshaw, Craig Citro, Lisandro Dalcin, Dag Sverre Seljebotn, and Kurt Smith. "
        "2011. Cython: The Best of Both Worlds. Computing in Science Engineering 13, 2 (2011), 31–39.",
        "Cython: The Best of Both Worlds",
        ["Behnel", "Bradshaw", "Citro", "Dalcin", "Seljebotn", "Smith"],
        2011,
    ),
    "acm-one-author": (
        "Henry S. Frank. 1970. The Structure of Ordinary Water. Science 169 (1970), 635–641.",
        "The Structure of Ordinary Water",
        ["Frank"],
        1970,
    ),
    "elsevier-harv": (
        "Behnel, S., Bradshaw, R., Citro, C., Dalcin, L., Seljebotn, D.S., Smith, K., 2011. Cython: The best "
        "of both worlds. Computing in Science Engineering 13, 31–39.",
        "Cython: The best of both worlds",
        ["Behnel", "Bradshaw", "Citro", "Dalcin", "Seljebotn", "Smith"],
        2011,
    ),
    "elsevier-harv-in": (
        "Knutsson, H., Westin, C.F., 1993. Normalized and differential convolution, in: Proceedings of IEEE "
        "Conference on Computer Vision and Pattern Recognition, pp. 515–523.",
        "Normalized and differential convolution",
        ["Knutsson", "Westin"],
        1993,
    ),
    "apa": (
        "Vaswani, A., Shazeer, N., Parmar, N., Uszkoreit, J., Jones, L., Gomez, A. N., . . . Polosukhin, I. "
        "(2017). Attention is all you need. In Advances in neural information processing systems.",
        "Attention is all you need",
        # ". . .": names left out; the last one is not the seventh author (a source that
        # cuts its list at ten would call it "not an author"): the list is read as cut
        ["Vaswani", "Shazeer", "Parmar", "Uszkoreit", "Jones", "Gomez"],
        2017,
    ),
    "ieee": (
        "A. Vaswani, N. Shazeer, and I. Polosukhin, “Attention is all you need,” in Advances in Neural "
        "Information Processing Systems, 2017.",
        "Attention is all you need",
        ["Vaswani", "Shazeer", "Polosukhin"],
        2017,
    ),
    "lncs": (
        "Behnel, S., Bradshaw, R., Citro, C., Dalcin, L., Seljebotn, D.S., Smith, K.: Cython: The best of "
        "both worlds. Computing in Science Engineering 13(2), 31–39 (2011)",
        "Cython: The best of both worlds",
        ["Behnel", "Bradshaw", "Citro", "Dalcin", "Seljebotn", "Smith"],
        2011,
    ),
    "elsevier-num-et-al": (
        "P. Virtanen, R. Gommers, T. E. Oliphant, M. Haberland, T. Reddy, et al., SciPy 1.0: Fundamental "
        "algorithms for scientific computing in Python, Nature Methods 17 (2020) 261–272.",
        "SciPy 1.0: Fundamental algorithms for scientific computing in Python",
        ["Virtanen", "Gommers", "Oliphant", "Haberland", "Reddy"],
        2020,
    ),
    "elsevier-num-and-in-title": (
        "H. Knutsson, C.-F. Westin, Normalized and differential convolution, in: Proceedings of IEEE "
        "Conference on Computer Vision and Pattern Recognition, 1993, pp. 515–523.",
        "Normalized and differential convolution",
        ["Knutsson", "Westin"],
        1993,
    ),
    "elsevier-num-commas-in-title": (
        "S. Calinon, F. Guenter, A. Billard, On learning, representing, and generalizing a task in a "
        "humanoid robot, IEEE Transactions on Systems, Man, and Cybernetics, Part B 37 (2) (2007) 286–298.",
        "On learning, representing, and generalizing a task in a humanoid robot",
        ["Calinon", "Guenter", "Billard"],
        2007,
    ),
    "ieee-et-al-only": (
        "et al., “Spectral properties of a time-periodic Fokker-Planck equation,” Phys. Rev. E, 1994.",
        "Spectral properties of a time-periodic Fokker-Planck equation",
        [],
        1994,
    ),
    "a-quote-inside-the-title": (
        "K. R. Narayanan and Katrin Popel. Shannon-entropy-based nonequilibrium “entropic” temperature of a "
        "general distribution. Phys. Rev. E, 2012.",
        "Shannon-entropy-based nonequilibrium “entropic” temperature of a general distribution",
        ["Narayanan", "Popel"],
        2012,
    ),
    "a-hyphenated-initial": (
        "Y. Jung and I.-m. Kim. Nonlocal impacts in the conserved Kardar-Parisi-Zhang equation. "
        "Phys. Rev. E, "
        "2000.",
        "Nonlocal impacts in the conserved Kardar-Parisi-Zhang equation",
        ["Jung", "Kim"],
        2000,
    ),
    "an-accent-set-apart": (  # the PDF's "ł" set as its own glyph: a lower-case piece of a name
        "A. Irani and M. P loszajczak, “Multiplicity distributions in binary fragmenting with inhibition at "
        "the transition line,” Phys. Rev. E, 1996.",
        "Multiplicity distributions in binary fragmenting with inhibition at the transition line",
        ["Irani", "loszajczak"],
        1996,
    ),
    "a-camel-case-family-name": (
        "Alexander S. Szalay, Jim Gray, Ani R. Thakar, and Jan vandenBerg. The SDSS Skyserver: Public Access "
        "to the Sloan Multitask Sky Server Data. In Proceedings of the 2002 ACM SIGMOD, 2002.",
        "The SDSS Skyserver: Public Access to the Sloan Multitask Sky Server Data",
        ["Szalay", "Gray", "Thakar", "vandenBerg"],
        2002,
    ),
    "a-quoted-title-that-starts-with-a-year": (
        "N. Nadal, “1989-excavation-report-Madjebebe,” 2015.",
        "1989-excavation-report-Madjebebe",
        ["Nadal"],
        2015,
    ),
    "elsevier-num-a-title-of-capitalised-words": (
        "B. Settles, M. Craven, S. Ray, Multiple-Instance Passive Learning, in: Advances in Neural "
        "Information "
        "Processing Systems, 2009.",
        "Multiple-Instance Passive Learning",
        ["Settles", "Craven", "Ray"],
        2009,
    ),
    "apa-et-al-alone": (
        "et al. (1994). Spectral properties of a time-periodic Fokker-Planck equation. Phys. Rev. E.",
        "Spectral properties of a time-periodic Fokker-Planck equation",
        [],
        1994,
    ),
    "nature": (
        "Robinson, P. N. & Mundlos, S. The human phenotype ontology. Clinical Genetics 77, 525–534 (2010).",
        "The human phenotype ontology",
        ["Robinson", "Mundlos"],
        2010,
    ),
    # DBLP numbers a homonym ("Bin Dai 0001"); BibTeX reads the number as the family name
    "lncs-dblp-number": (
        "Ferianc, M., Maji, P., Mattina, M., 0001, M.R.: On the Effects of Quantisation on Model Uncertainty "
        "in Bayesian Neural Networks. In: UAI (2021)",
        "On the Effects of Quantisation on Model Uncertainty in Bayesian Neural Networks",
        ["Ferianc", "Maji", "Mattina", "0001"],
        2021,
    ),
    # ACM's "[n. d.]" where the year is printed: no year, and no author either
    "acm-no-date": (
        "Jian Wu, Kyle Mark Williams, Hung-Hsuan Chen, and C. Lee Giles. [n. d.]. CiteSeerX: AI in a Digital "
        "Library Search Engine. ([n. d.]).",
        "CiteSeerX: AI in a Digital Library Search Engine",
        ["Wu", "Williams", "Chen", "Giles"],
        None,
    ),
    # a name printed whole after an inverted one, then harv's ", 2010."
    "harv-whole-name": (
        "Gao, Z.K., Anonymous, 2010. Motif distributions in phase-space networks for characterizing "
        "experimental two-phase flow patterns with chaotic features. Phys. Rev. E .",
        "Motif distributions in phase-space networks for characterizing experimental two-phase flow patterns "
        "with chaotic features",
        ["Gao", "Anonymous"],
        2010,
    ),
    # user names among the authors of a software release (comma style, and sentence style)
    "siam-user-names": (
        "J. X. Prochaska, N. Tejos, N. Crighton, jnburchett, tiffanyhsyu, Tuo-Ji, marijana777, ktirimba, "
        "jhennawi, R. Cooke, J. O’Meara, and J. Werk, linetools/linetools: Third Minor Release, 2017.",
        "linetools/linetools: Third Minor Release",
        ["Prochaska", "Tejos", "Crighton", "jnburchett", "tiffanyhsyu", "Tuo-Ji", "marijana777", "ktirimba",
         "jhennawi", "Cooke", "O’Meara", "Werk"],
        2017,
    ),
    "plainnat-user-names": (
        "J. X. Prochaska, N. Tejos, N. Crighton, jnburchett, tiffanyhsyu, and J. Werk. linetools/linetools: "
        "Third Minor Release, 2017.",
        "linetools/linetools: Third Minor Release",
        ["Prochaska", "Tejos", "Crighton", "jnburchett", "tiffanyhsyu", "Werk"],
        2017,
    ),
    "harv-user-name-first": (
        "ejeschke, Lim, P.L., Rajul, Rupak, Tollerud, E., Mumford, S., Deil, C., 2017. ejeschke/ginga: Ginga "
        "v2.6.6. doi:10.5281/zenodo.1040969.",
        "ejeschke/ginga: Ginga v2.6.6",
        ["ejeschke", "Lim", "Rajul", "Rupak", "Tollerud", "Mumford", "Deil"],
        2017,
    ),
    # an accent the .bib set apart (BibTeX read "Satarić ć" as von "Satarić", family "ć", and
    # compares it so): still a name
    "num-accent-set-apart": (
        "M. V. Satarić ć, S. Zeković ć, J. A. Tuszyń ński, J. Pokorny, Mössbauer effect as a possible tool "
        "in detecting nonlinear excitations in microtubules, Phys. Rev. E (1993).",
        "Mössbauer effect as a possible tool in detecting nonlinear excitations in microtubules",
        ["ć", "ć", "ński", "Pokorny"],
        1993,
    ),
    "siam-dblp-number-after-initials": (
        "H. Ren, H. Dai, B. D. 0001, X. Chen, and D. Zhou, LEGO: Latent Execution-Guided Reasoning with "
        "Multi-Hop Question Answering on Knowledge Graphs, in ICML, 2021.",
        "LEGO: Latent Execution-Guided Reasoning with Multi-Hop Question Answering on Knowledge Graphs",
        ["Ren", "Dai", "0001", "Chen", "Zhou"],  # as BibTeX read "Bo Dai 0001"; not "D."
        2021,
    ),
    # a title longer than any name, in a comma-only style: not left out of the names read
    "num-long-title": (
        "G. Papadakis, D. Skoutas, E. Thanos, T. Palpanas, First-Year Wilkinson Microwave Anisotropy Probe "
        "(WMAP) Observations: Determination of Cosmological Parameters, ApJS (2020). arXiv:astro-ph/0302209.",
        "First-Year Wilkinson Microwave Anisotropy Probe (WMAP) Observations: Determination of Cosmological "
        "Parameters",
        ["Papadakis", "Skoutas", "Thanos", "Palpanas"],
        2020,
    ),
    # a mononym first ("Sajama"): the list is still "Family, I." pairs ("A." is no author)
    "apa-mononym": (
        "Sajama, & Orlitsky, A. (2005). Estimating and efficient computing density based distance metrics. "
        "In Icml.",
        "Estimating and efficient computing density based distance metrics",
        ["Sajama", "Orlitsky"],
        2005,
    ),
    # a title of words joined by hyphens (a data set's file name) is a title of several words
    "acl-hyphen-joined-title": (
        "Ning Nadal. 2015. 1989-excavation-report-Madjebebe.",
        "1989-excavation-report-Madjebebe",
        ["Nadal"],
        2015,
    ),
    "plain-hyphen-joined-title": (
        "Ning Nadal. 1989-excavation-report-Madjebebe. 2015. doi: 10.6084/m9.figshare.1297059.",
        "1989-excavation-report-Madjebebe",
        ["Nadal"],
        2015,
    ),
    "harv-dblp-numbers": (
        "Qu, Z., Li, X., Duan, R., 0007, Y.L., 0011, B.T., Lu, Z., 2022. Generalized Federated Learning via "
        "Sharpness Aware Minimization, in: ICML.",
        "Generalized Federated Learning via Sharpness Aware Minimization",
        ["Qu", "Li", "Duan", "0007", "0011", "Lu"],
        2022,
    ),
}


@pytest.mark.parametrize("style", sorted(CASES))
def test_title_authors_and_year_in_every_style(style: str) -> None:
    text, title, families, year = CASES[style]
    f = read_fields(text)
    assert (f.title, f.families, f.year) == (title, families, year)
    assert f.confident


@pytest.mark.parametrize(
    "text",
    [
        "Proceedings of the 2021 Conference on Empirical Methods, pages 1–10, 2021.",  # a venue, no title
        "A. Smith. 2020.",  # no title at all
        "Neural networks everywhere",  # no names, no year
        # the names cut in the wrong place: a list of names is no title
        "Ren, H., Dai, H.: 0001, B.D., Chen, X., Yasunaga, M.: LEGO. In: ICML (2021)",
    ],
)
def test_a_reading_without_title_names_or_year_is_not_confident(text: str) -> None:
    assert not read_fields(text).confident


def test_an_arxiv_id_is_no_venue() -> None:
    f = read_fields(
        "Hanul Shin, Jung Kwon Lee, Jaehong Kim, and Jiwon Kim. 2017. Continual Learning with Deep "
        "Generative Replay. In ICLR. arXiv:1705.08690"
    )
    assert f.venue == "ICLR" and f.arxiv == "1705.08690"
